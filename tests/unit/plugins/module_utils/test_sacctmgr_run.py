"""sacctmgr's Runner on real processes: a stand-in sacctmgr script answers as
sacctmgr does (exit status, stdout, stderr); the texts themselves are tested
on captured output in test_sacctmgr_output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_run as sr


@pytest.fixture
def sacctmgr(tmp_path):
    """A sacctmgr that runs ``script`` (sh) and logs its arguments."""
    log = tmp_path / 'log'

    def make(script):
        binary = tmp_path / 'sacctmgr'
        binary.write_text('#!/bin/sh\necho "$*" >> %s\n%s\n' % (log, script))
        binary.chmod(0o755)
        return str(binary)

    make.log = log
    return make


def test_read_splits_the_rows_and_counts_the_call(sacctmgr):
    runner = sr.Runner(sacctmgr("printf 'a|x|\\nb|y|\\n\\n'"), 10)
    assert runner.read('qos', ['Name', 'Flags']) == [['a', 'x'], ['b', 'y']]
    assert runner.calls == 1
    assert sacctmgr.log.read_text() == '-nP show qos format=Name,Flags\n'


def test_a_read_that_exits_non_zero_fails_with_its_text(sacctmgr):
    runner = sr.Runner(sacctmgr('echo "sacctmgr: error: something odd" >&2; exit 1'), 10)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.read('qos', ['Name'])
    assert err.value.code == 'sacctmgr_failed'
    assert err.value.message == 'sacctmgr -nP show qos format=Name: sacctmgr: error: something odd'


def test_a_write_that_had_nothing_to_do_is_no_error(sacctmgr):
    runner = sr.Runner(sacctmgr('echo " Nothing modified"; exit 1'), 10)
    assert runner.write(['modify', 'qos', 'where', 'name=x', 'set', 'priority=1']) == ' Nothing modified\n'
    assert sacctmgr.log.read_text() == '-i modify qos where name=x set priority=1\n'


def test_a_refusal_with_exit_status_0_is_an_error(sacctmgr):
    runner = sr.Runner(sacctmgr('echo " Error with request: Job(s) active, cancel job(s) before remove" >&2'), 10)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(['delete', 'account', 'where', 'name=a'])
    assert err.value.code == 'jobs_running'


def test_a_write_that_fails_without_a_known_text(sacctmgr):
    runner = sr.Runner(sacctmgr('echo " odd"; exit 1'), 10)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(['add', 'qos', 'name=x'])
    assert (err.value.code, err.value.message, err.value.fix) == (
        'sacctmgr_failed', 'sacctmgr add qos name=x: odd', 'see the message')


def test_a_sacctmgr_that_hangs_is_a_timeout_named_with_its_arguments(sacctmgr):
    runner = sr.Runner(sacctmgr('sleep 30'), 0.5)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.read('cluster', ['Cluster'])
    assert err.value.code == 'timeout'
    assert err.value.message == 'sacctmgr -nP show cluster format=Cluster did not finish within 0.5 s'
    assert err.value.fix == 'check that slurmdbd answers (sacctmgr ping), or raise timeout'
    assert runner.calls == 1


def test_a_sacctmgr_that_cannot_run(tmp_path):
    missing = str(tmp_path / 'sacctmgr')
    runner = sr.Runner(missing, 10)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(['add', 'qos', 'name=x'])
    assert err.value.code == 'no_sacctmgr'
    assert err.value.message.startswith('cannot run %s: ' % missing)
    assert 'Slurm client commands' in err.value.fix
