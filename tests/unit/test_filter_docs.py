"""Every filter has its documentation file (plugins/filter/NAME.yml: what
ansible-doc and Galaxy show), and its options are the function's parameters
(tools/filter_docs.py writes a missing one from the docstring)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import os
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import filter_docs  # noqa: E402  pylint: disable=wrong-import-position

FILTERS = filter_docs.filters()


def test_every_filter_plugin_file_is_read():
    assert {'hostlist_compress', 'slurm_state_plan', 'site_converged', 'grafana_problems'} <= set(FILTERS)


@pytest.mark.parametrize('name', sorted(FILTERS))
def test_each_filter_has_documentation_that_matches_its_function(name):
    path = os.path.join(ROOT, 'plugins', 'filter', name + '.yml')
    assert os.path.exists(path), 'run tools/filter_docs.py: %s has no documentation' % name
    with open(path) as f:
        doc = yaml.safe_load(f)
    assert doc['DOCUMENTATION']['name'] == name
    assert doc['DOCUMENTATION']['short_description'] and doc['RETURN']['_value']['description']
    params = list(inspect.signature(FILTERS[name]).parameters)
    options = doc['DOCUMENTATION']['options']
    assert list(options) == ['_input'] + params[1:], (name, list(options), params)
