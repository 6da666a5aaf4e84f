"""Every role's meta/argument_specs.yml documents exactly its defaults."""
import glob
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, 'roles', '*', 'defaults')))


def load(role, *parts):
    with open(os.path.join(ROOT, 'roles', role, *parts)) as f:
        return yaml.safe_load(f) or {}


def test_there_are_roles():
    assert 'munge' in ROLES


@pytest.mark.parametrize('role', ROLES)
def test_spec_keys_equal_defaults(role):
    defaults = load(role, 'defaults', 'main.yml')
    options = load(role, 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    assert set(defaults) == set(options)


@pytest.mark.parametrize('role', ROLES)
def test_spec_defaults_equal_defaults(role):
    defaults = load(role, 'defaults', 'main.yml')
    options = load(role, 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    for name, value in defaults.items():
        assert options[name].get('default') == value, name


@pytest.mark.parametrize('role', ROLES)
def test_public_variables_are_role_prefixed(role):
    for name in load(role, 'defaults', 'main.yml'):
        assert name.startswith(role + '_'), name
