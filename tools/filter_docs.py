"""Write the documentation file (plugins/filter/NAME.yml, what ansible-doc and
Galaxy read) of each filter that has none yet, from the filter function's
docstring and signature. A file that exists is left as it is: edit it by hand
once written. tests/unit/test_filter_docs.py checks that every filter has one
and that its options are the function's parameters.

    .venv/bin/python tools/filter_docs.py
"""

import importlib
import inspect
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, '.collections'))
FILES = ('gpuhpc', 'slurm', 'site', 'alertmanager', 'dcgm_exporter', 'grafana', 'node_exporter', 'web_config')


def filters():
    """name -> function, over every filter plugin file of the collection."""
    found = {}
    for name in sorted(os.listdir(os.path.join(ROOT, 'plugins', 'filter'))):
        if not name.endswith('.py') or name.startswith('_'):
            continue
        module = importlib.import_module('ansible_collections.gpuhpc.slurm.plugins.filter.' + name[:-3])
        found.update(module.FilterModule().filters())
    return found


def markup(text):
    """RST's ``literal`` as Ansible's C(literal)."""
    return re.sub(r'``([^`]+)``', r'C(\1)', text)


def paragraphs(doc):
    parts = [' '.join(line.strip() for line in p.splitlines()) for p in re.split(r'\n\s*\n', doc.strip())]
    return [markup(p) for p in parts if p]


class Literal(str):
    pass


def literal(dumper, data):
    return dumper.represent_scalar('tag:yaml.org,2002:str', data, style='|')


yaml.add_representer(Literal, literal)


class Dumper(yaml.SafeDumper):
    """Lists indented under their key, as yamllint's config wants them."""

    def increase_indent(self, flow=False, indentless=False):
        return super(Dumper, self).increase_indent(flow, False)


Dumper.add_representer(Literal, literal)


def document(name, function):
    doc = inspect.getdoc(function) or name
    parts = paragraphs(doc)
    first = parts[0]
    for m in re.finditer(r'[.:;](?=\s)', parts[0]):  # the first sentence, not inside C(...)
        head = parts[0][:m.start()]
        if head.count('(') == head.count(')'):
            first = head
            break
    first = first.rstrip('.:;')
    params = list(inspect.signature(function).parameters.values())
    options = {'_input': {'description': 'The value the filter is applied to (C(%s) in the description).'
                          % params[0].name, 'type': 'raw', 'required': True}}
    positional = []
    for p in params[1:]:
        positional.append(p.name)
        option = {'description': 'C(%s) in the description.' % p.name, 'type': 'raw'}
        if p.default is inspect.Parameter.empty:
            option['required'] = True
        elif p.default is not None:
            option['default'] = list(p.default) if isinstance(p.default, tuple) else p.default
        options[p.name] = option
    documentation = {'name': name, 'version_added': '0.1.0', 'short_description': first[:160],
                     'description': parts}
    if positional:
        documentation['positional'] = ', '.join(positional)
    documentation['options'] = options
    documentation['author'] = ['gpuhpc.slurm contributors']
    args = ', '.join(positional)
    example = ('- name: Use gpuhpc.slurm.%s\n  ansible.builtin.debug:\n    msg: "{{ value | gpuhpc.slurm.%s%s }}"\n'
               % (name, name, '(%s)' % args if args else ''))
    return {'DOCUMENTATION': documentation, 'EXAMPLES': Literal(example),
            'RETURN': {'_value': {'description': 'What the description says the filter returns.', 'type': 'raw'}}}


def main():
    written = []
    for name, function in sorted(filters().items()):
        path = os.path.join(ROOT, 'plugins', 'filter', name + '.yml')
        if os.path.exists(path):
            continue
        with open(path, 'w') as f:
            f.write('---\n# Written by tools/filter_docs.py from the docstring of the filter; edit freely.\n')
            yaml.dump(document(name, function), f, Dumper=Dumper, sort_keys=False, width=110, allow_unicode=True)
        written.append(name)
    print('written: %s' % (', '.join(written) or 'none'))


if __name__ == '__main__':
    main()
