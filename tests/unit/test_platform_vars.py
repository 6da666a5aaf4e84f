"""Each role's platform files (vars/<os_family>.yml, vars/<distribution>-<major>.yml)
define the same variables, so a platform the lab cannot run (Ubuntu 22.04/24.04
through the Debian family's file, EL9 through RedHat.yml) lacks none that a
tested one has. The Slurm roles pick the file by first_found: the
distribution and major version, then the OS family."""
import glob
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAMILIES = ('Debian', 'RedHat')
ROLES = sorted({os.path.basename(os.path.dirname(os.path.dirname(p)))
                for p in glob.glob(os.path.join(ROOT, 'roles', '*', 'vars', 'Debian.yml'))})


def names(path):
    with open(path) as f:
        return set(yaml.safe_load(f) or {})


def test_the_slurm_roles_have_platform_files():
    assert {'munge', 'slurm', 'slurmctld', 'slurmd', 'slurmdbd', 'node_exporter'} <= set(ROLES)


@pytest.mark.parametrize('role', ROLES)
def test_every_platform_file_defines_the_same_variables(role):
    files = sorted(p for p in glob.glob(os.path.join(ROOT, 'roles', role, 'vars', '*.yml'))
                   if os.path.basename(p) != 'main.yml')
    assert {os.path.join(ROOT, 'roles', role, 'vars', f + '.yml') for f in FAMILIES} <= set(files)
    expected = names(files[0])
    for path in files:
        assert names(path) == expected, os.path.relpath(path, ROOT)
