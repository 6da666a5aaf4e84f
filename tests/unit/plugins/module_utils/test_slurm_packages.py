"""The apt source and preferences of the Slurm packages (slurm_package_*)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import slurm_packages as sp

SID = 'deb [check-valid-until=no] http://deb.debian.org/debian sid main'


def test_nothing_pinned_writes_nothing():
    assert sp.apt_files('', '', []) == {}


def test_a_version_alone_pins_the_slurm_packages():
    files = sp.apt_files('', '26.05.5-1', [])
    assert list(files) == [sp.PREFERENCES_FILE]
    text = files[sp.PREFERENCES_FILE]
    assert 'Pin: version 26.05.5-1\nPin-Priority: 1001' in text
    assert 'Pin: version 26.05.5-1+b*\nPin-Priority: 1001' in text
    # OpenPMIx (libpmix2t64) is another source: its package must not match
    assert 'libpmi*' not in text and 'libpmi0* libpmi2-*' in text


def test_a_repository_gives_only_what_is_pinned_from_it():
    files = sp.apt_files(SID, '26.05.5-1', ['libhwloc15', 'libllhttp9.4'])
    assert files[sp.SOURCE_FILE].endswith(SID + '\n')
    records = files[sp.PREFERENCES_FILE].split('\n\n')
    # apt takes the first specific record: the version pin, then the libraries, then the rest at 100
    assert records[2] == 'Package: libhwloc15 libllhttp9.4\nPin: release n=sid\nPin-Priority: 990'
    assert records[3] == 'Package: *\nPin: release n=sid\nPin-Priority: 100\n'


@pytest.mark.parametrize('line, pin', [
    (SID, 'release n=sid'),
    ('deb http://deb.debian.org/debian unstable main', 'release a=unstable'),
    ('deb [trusted=yes] file:/srv/slurm ./', 'origin ""'),
    ('deb [signed-by=/usr/share/keyrings/x.gpg] https://repo.example.org/slurm/ ./', 'origin "repo.example.org"'),
])
def test_the_release_pin_of_a_source_line(line, pin):
    assert sp.release_pin(line) == pin


def test_source_problems_name_the_variable_and_the_fix():
    assert sp.source_problems(SID, '26.05.5-1', ['libhwloc15'], 'Debian') == []
    assert sp.source_problems('', '', [], 'RedHat') == []
    bad = sp.source_problems('http://deb.debian.org/debian sid', '26.05 5', ['libhwloc15'], 'Debian')
    assert len(bad) == 2
    assert bad[0].startswith("slurm_package_repository 'http://deb.debian.org/debian sid' is not an apt source line")
    assert bad[1].startswith("slurm_package_version '26.05 5' is not a package version")
    assert 'slurm_package_repository is empty' in sp.source_problems('', '', ['libhwloc15'], 'Debian')[0]
    assert 'this host is RedHat' in sp.source_problems('', '24.11.5', [], 'RedHat')[0]


def test_installed_slurm_packages_and_those_behind():
    packages = {
        'slurm-client': [{'version': '26.05.5-1'}],
        'slurmd': [{'version': '26.05.5-1+b1'}],
        'slurm-wlm-basic-plugins': [{'version': '24.11.5-4+deb13u1'}],
        'libpmix2t64': [{'version': '5.0.7-1'}],
        'munge': [{'version': '0.5.16-1'}],
    }
    assert sp.installed_slurm_packages(packages) == ['slurm-client', 'slurm-wlm-basic-plugins', 'slurmd']
    assert sp.packages_behind(packages, '26.05.5-1') == ['slurm-wlm-basic-plugins 24.11.5-4+deb13u1']
    assert sp.packages_behind({}, '26.05.5-1') == []
