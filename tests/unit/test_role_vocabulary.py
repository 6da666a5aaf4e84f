"""One vocabulary across the roles: where software comes from (<role>_install,
<role>_release_*), one check-mode flag (__<role>_pending), and old names kept
for a release by gpuhpc.slurm.renamed_vars, applied before anything reads the
new ones on every host the role runs on."""
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
RENAMING = sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                  for p in glob.glob(os.path.join(ROOT, 'roles', '*', 'vars', 'main.yml'))
                  if '_renamed_vars:' in open(p).read())


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


def test_slurm_exporter_renames():
    assert 'slurm_exporter' in RENAMING


@pytest.mark.parametrize('role', RENAMING)
def test_renames_come_first_in_preflight_and_main(role):
    """site.yml runs some preflights on one host and then skips them in main:
    the renames are the first task of both, and main's is unconditional."""
    for name in ('preflight.yml', 'main.yml'):
        first = load('roles', role, 'tasks', name)[0]
        assert first.get('ansible.builtin.import_tasks') == 'renamed_vars.yml', (role, name, first)
        assert 'when' not in first, (role, name)
    task, = load('roles', role, 'tasks', 'renamed_vars.yml')
    assert 'renamed_vars(__%s_renamed_vars)' % role in task['loop']


@pytest.mark.parametrize('role', RENAMING)
def test_old_names_are_neither_defaults_nor_documented_options(role):
    renames = load('roles', role, 'vars', 'main.yml')['__%s_renamed_vars' % role]
    defaults = load('roles', role, 'defaults', 'main.yml')
    for old, new in renames.items():
        new = new['name'] if isinstance(new, dict) else new
        # a new name chosen by the old value (a URL or a file) names each of its candidates
        for name in re.findall(r"'(%s_\w+)'" % role, new) if '{{' in new else [new]:
            assert name in defaults, (old, name)
        if old != new:
            assert old not in defaults, old


@pytest.mark.parametrize('role', UNIFIED)
def test_install_choices_come_from_the_vocabulary(role):
    options = load('roles', role, 'meta', 'argument_specs.yml')['argument_specs']['main']['options']
    defaults = load('roles', role, 'defaults', 'main.yml')
    assert not [n for n in defaults if re.search(r'_(flavour|upstream_[a-z0-9]+|install_source)$', n)]
    if role + '_install' in options:
        # true and false: grafana_install's old values, accepted until 1.0.0 (renamed_vars maps them)
        assert set(c for c in options[role + '_install']['choices'] if not isinstance(c, bool)) <= INSTALL_VALUES
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
