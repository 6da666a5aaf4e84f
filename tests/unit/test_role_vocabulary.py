"""One vocabulary across the roles: where software comes from (<role>_install,
<role>_release_*), and one check-mode flag (__<role>_pending)."""
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The <role>_install values and what each means; a role takes the ones that fit.
INSTALL_VALUES = {'package', 'release', 'files', 'none', 'collection'}
# Roles with a <role>_install choice.
UNIFIED = ['alertmanager', 'dcgm_exporter', 'grafana', 'node_exporter', 'prometheus', 'slurm_exporter']
# Roles that install something (the internal pinned_* roles hand back a result with `pending` instead).
INSTALLING = sorted(set(os.listdir(os.path.join(ROOT, 'roles'))) - {'pinned_archive', 'pinned_repo', 'web_config',
                                                                    'slurm', 'slurm_accounting'})


def load(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f) or {}


def role_text(role):
    text = ''
    for path in sorted(glob.glob(os.path.join(ROOT, 'roles', role, '*', '*.yml'))
                       + glob.glob(os.path.join(ROOT, 'roles', role, 'templates', '*.j2'))):
        with open(path) as f:
            text += f.read()
    return text


@pytest.mark.parametrize('role', UNIFIED)
def test_install_choices_come_from_the_vocabulary(role):
    options = load('roles', role, 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    defaults = load('roles', role, 'defaults', 'main.yml')
    assert not [n for n in defaults if re.search(r'_(flavour|upstream_[a-z0-9]+|install_source)$', n)]
    if role + '_install' in options:
        assert set(options[role + '_install']['choices']) <= INSTALL_VALUES
        release = [n for n in defaults if n.startswith(role + '_release_')]
        if 'release' in options[role + '_install']['choices']:
            assert {role + '_release_url', role + '_release_file', role + '_release_sha256'} <= set(release)


@pytest.mark.parametrize('role', INSTALLING)
def test_one_check_mode_flag(role):
    """A check run on a host where the software is not there yet: one fact,
    __<role>_pending, and no task reading an install's 'changed' for it."""
    text = role_text(role)
    assert set(re.findall(r'__\w*pending\w*', text)) == {'__%s_pending' % role}
    assert 'not (ansible_check_mode and' not in text
