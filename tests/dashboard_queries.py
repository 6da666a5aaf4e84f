"""The PromQL queries of Grafana dashboards, for tests and the lab verify.

    python3 tests/dashboard_queries.py roles/grafana/files/dashboards/*.json

prints one JSON object per line, one per query:

    {"dashboard": "<uid>", "title": "<dashboard title>", "file": "<path>",
     "panel": "<panel title, or 'variable <name>'>", "ref": "<refId, or 'variable'>",
     "instant": <true for an instant query>, "expr": "<as written>",
     "expr_substituted": "<Grafana variables replaced: valid PromQL for a real Prometheus>",
     "metrics": ["<metric names it reads>", ...], "dcgm": <true when it reads DCGM_* metrics, or series recorded from them>}

Queries are every panel target's expr (rows and their nested panels
included) and the series selector of each query variable
(label_values(<selector>, <label>) or query_result(<expr>)).

Substitutions: $__rate_interval and $__interval become 1m, $__range 1h
($__range_s 3600, $__range_ms 3600000, $__interval_ms 60000); a query
variable (instance, gpu, node, account, ...) becomes .+ (the dashboards use
them only in regex matchers, =~"$instance"); a custom, constant, interval or
text box variable becomes its current value.

Standard library only; no shebang: run it with python3.
"""
import json
import re
import sys

BUILTINS = {
    '__rate_interval': '1m',
    '__interval': '1m',
    '__interval_ms': '60000',
    '__range': '1h',
    '__range_s': '3600',
    '__range_ms': '3600000',
}
QUERY_VARIABLE_VALUE = '.+'

# $name, ${name}, ${name:format}, [[name]], [[name:format]]
_VARIABLE = re.compile(r'\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)')
_LABEL_VALUES = re.compile(r'^\s*label_values\s*\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$', re.S)
_QUERY_RESULT = re.compile(r'^\s*query_result\s*\((.*)\)\s*$', re.S)

# PromQL words that are not metric names.
_KEYWORDS = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless',
             'offset', 'inf', 'nan', 'atan2'}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MODIFIER = re.compile(r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)')
_IDENT = re.compile(r'(?<![\w.:$])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?')


def panels(dashboard):
    """Every panel of a dashboard, rows and the panels inside rows included, in order."""
    def walk(items):
        for panel in items or []:
            yield panel
            yield from walk(panel.get('panels'))
    return list(walk(dashboard.get('panels')))


def _variable_query(variable):
    query = variable.get('query')
    if isinstance(query, dict):
        query = query.get('query')
    return query if isinstance(query, str) and query.strip() else variable.get('definition') or ''


def variable_expr(variable):
    """The PromQL in a Prometheus query variable, or None (label_values(label), metrics(...), label_names())."""
    query = _variable_query(variable)
    m = _LABEL_VALUES.match(query)
    if m:
        return m.group(1).strip()
    m = _QUERY_RESULT.match(query)
    if m:
        return m.group(1).strip()
    return None


def records(dashboard):
    """One dict per query: panel (title), ref, instant, expr."""
    out = []
    for panel in panels(dashboard):
        for target in panel.get('targets') or []:
            expr = target.get('expr')
            if isinstance(expr, str) and expr.strip():
                out.append(dict(panel=panel.get('title', ''), ref=target.get('refId', ''),
                                instant=bool(target.get('instant')) and not target.get('range'), expr=expr))
    for variable in (dashboard.get('templating') or {}).get('list') or []:
        if variable.get('type') == 'query':
            expr = variable_expr(variable)
            if expr:
                out.append(dict(panel='variable ' + variable.get('name', ''), ref='variable', instant=True, expr=expr))
    return out


def queries(dashboard):
    """[(panel title, expr)] of every query in the dashboard (see records)."""
    return [(r['panel'], r['expr']) for r in records(dashboard)]


def variable_values(dashboard):
    """name -> value to put in its place, for every variable the dashboard defines."""
    values = {}
    for variable in (dashboard.get('templating') or {}).get('list') or []:
        name = variable.get('name')
        if not name:
            continue
        if variable.get('type') in ('query', 'adhoc', 'datasource'):
            values[name] = QUERY_VARIABLE_VALUE
            continue
        current = (variable.get('current') or {}).get('value')
        if isinstance(current, list):
            current = current[0] if current else None
        if current in (None, '', '$__all'):
            options = [o.get('value') for o in variable.get('options') or [] if o.get('value') not in (None, '$__all')]
            current = options[0] if options else (variable.get('query') or '').split(',')[0].strip()
        values[name] = str(current)
    return values


def variables_used(expr):
    """Names of the Grafana variables an expression uses."""
    return [next(g for g in m.groups() if g) for m in _VARIABLE.finditer(expr)]


def substitute(expr, values):
    """expr with Grafana's built-in and the dashboard's variables replaced; unknown ones are left as they are."""
    def repl(m):
        name = next(g for g in m.groups() if g)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in values:
            return values[name]
        return m.group(0)
    return _VARIABLE.sub(repl, expr)


def metric_names(expr):
    """The metric names a PromQL expression reads (Grafana variables substituted first)."""
    text = _STRING.sub('""', expr)
    text = re.sub(r'\{[^}]*\}', ' ', text)           # label matchers
    text = re.sub(r'\[[^\]]*\]', ' ', text)          # ranges and subquery steps
    text = _MODIFIER.sub(' ', text)                  # by (...), on (...), group_left (...)
    text = re.sub(r'\boffset\s+-?\w+', ' ', text)
    text = re.sub(r'@\s*(?:start\s*\(\s*\)|end\s*\(\s*\)|[\d.]+)', ' ', text)
    names = []
    for m in _IDENT.finditer(text):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in _KEYWORDS:
            continue                                 # a function or aggregation, or a keyword
        if word not in names:
            names.append(word)
    return names


def describe(path):
    """The records of one dashboard file, as the CLI prints them."""
    with open(path, encoding='utf-8') as f:
        dashboard = json.load(f)
    values = variable_values(dashboard)
    out = []
    for r in records(dashboard):
        substituted = substitute(r['expr'], values)
        names = metric_names(substituted)
        out.append(dict(dashboard=dashboard.get('uid', ''), title=dashboard.get('title', ''), file=path,
                        panel=r['panel'], ref=r['ref'], instant=r['instant'], expr=r['expr'],
                        expr_substituted=substituted, metrics=names,
                        dcgm=any('DCGM_' in n for n in names)))
    return out


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        sys.stderr.write('usage: python3 tests/dashboard_queries.py DASHBOARD.json ...\n')
        return 2
    for path in paths:
        for record in describe(path):
            sys.stdout.write(json.dumps(record, ensure_ascii=False, sort_keys=False) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
