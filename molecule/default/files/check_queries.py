"""Run every dashboard query (tests/dashboard_queries.py's JSON lines, in a
file) against a Prometheus' HTTP API; print one line per problem and a
summary; exit 1 when a query fails or a non-DCGM query names a metric
Prometheus does not have.

    python3 check_queries.py http://127.0.0.1:9090 queries.jsonl
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request


def get(base, path, **params):
    url = base + path + ('?' + urllib.parse.urlencode(params) if params else '')
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as err:
        return json.load(err)


def main(base, path):
    with open(path) as lines:
        queries = [json.loads(line) for line in lines if line.strip()]
    names = set(get(base, '/api/v1/label/__name__/values')['data'])
    problems, dcgm = [], 0
    for q in queries:
        where = '%s / %s' % (q['dashboard'], q['panel'])
        answer = get(base, '/api/v1/query', query=q['expr_substituted'])
        if answer.get('status') != 'success':
            problems.append('%s: query error %s: %s' % (where, answer.get('error'), q['expr_substituted']))
        if q['dcgm']:
            dcgm += 1
            continue
        for metric in q['metrics']:
            if metric not in names:
                problems.append('%s: %s is not exposed by the lab' % (where, metric))
    for problem in problems:
        print(problem)
    print('%d dashboard queries ran against %s: %d problem(s); %d use DCGM metrics, which have no data here'
          % (len(queries), base, len(problems), dcgm))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
