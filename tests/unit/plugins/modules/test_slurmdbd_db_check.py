"""slurmdbd_db_check reads the Slurm release through command.run(): stand-in slurmdbd,
dpkg-query and rpm (the database checks run against a real MariaDB in tests/integration)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

import pytest
from ansible_collections.gpuhpc.slurm.plugins.modules import slurmdbd_db_check


class Module(object):
    """What slurm_release() uses of an AnsibleModule; binaries only from `where`."""

    def __init__(self, where, slurm_version=None):
        self.where = where
        self.params = dict(slurm_version=slurm_version)

    def get_bin_path(self, name):
        path = self.where / name
        return str(path) if path.exists() else None

    def fail_json(self, **kwargs):
        raise AssertionError(kwargs)


@pytest.fixture
def tools(tmp_path):
    def make(**scripts):
        for name, body in scripts.items():
            binary = tmp_path / name
            binary.write_text('#!/bin/sh\n' + body + '\n')
            binary.chmod(0o755)
        return Module(tmp_path)
    return make


def test_the_release_comes_from_slurmdbd(tools):
    module = tools(**{'slurmdbd': 'echo "slurm 24.11.5"', 'dpkg-query': 'echo 24.05.3-1'})
    assert slurmdbd_db_check.slurm_release(module) == ((24, 11, 5), 'slurmdbd -V')


def test_a_given_release_runs_nothing(tools):
    module = tools(slurmdbd='exit 9')
    module.params['slurm_version'] = '25.05.3'
    assert slurmdbd_db_check.slurm_release(module) == ((25, 5, 3), 'given')


@pytest.mark.parametrize('slurmdbd', [
    'echo "slurmdbd: error: cannot read slurmdbd.conf" >&2; exit 1',
    'echo "no version here"',
])
def test_a_slurmdbd_without_an_answer_falls_back_to_the_package(tools, slurmdbd):
    module = tools(**{'slurmdbd': slurmdbd, 'dpkg-query': 'echo 24.05.3-1'})
    assert slurmdbd_db_check.slurm_release(module) == ((24, 5, 3), 'package slurmdbd')


def test_a_probe_past_its_timeout_is_killed_and_counts_as_no_answer(tools, monkeypatch):
    monkeypatch.setattr(slurmdbd_db_check, 'PROBE_TIMEOUT', 0.5)
    module = tools(**{'slurmdbd': 'exec sleep 30', 'dpkg-query': 'exec sleep 30', 'rpm': 'echo 23.11.10'})
    started = time.time()
    assert slurmdbd_db_check.slurm_release(module) == ((23, 11, 10), 'package slurm-slurmdbd')
    assert time.time() - started < 10


def test_no_release_anywhere(tools):
    assert slurmdbd_db_check.slurm_release(tools(rpm='exit 1')) == (None, None)
