"""command: the one way the collection runs a Slurm client command (real processes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys
import time

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import command


def sh(script):
    return ['sh', '-c', script]


def test_the_exit_status_and_both_outputs_come_back():
    assert command.run(sh('echo out; echo err >&2; exit 3'), 10) == (3, 'out\n', 'err\n')


def test_stdin_is_closed():
    """A command that reads stdin meets its end at once instead of waiting."""
    assert command.run(sh('read line; echo "read exit $?"'), 10) == (0, 'read exit 1\n', '')


def test_a_command_past_its_timeout_is_killed_and_named():
    started = time.time()
    with pytest.raises(command.CommandError) as err:
        command.run(['sleep', '30'], 0.5, 'sleepy thing')
    assert time.time() - started < 10
    assert err.value.code == 'timeout'
    assert err.value.message == 'sleepy thing did not finish within 0.5 s'


def test_the_message_names_the_arguments_when_no_what_is_given():
    with pytest.raises(command.CommandError) as err:
        command.run(['sleep', '30'], 0.2)
    assert err.value.message == 'sleep 30 did not finish within 0.2 s'


def test_a_command_that_cannot_start(tmp_path):
    with pytest.raises(command.CommandError) as err:
        command.run([str(tmp_path / 'no-such-binary'), 'x'], 10)
    assert err.value.code == 'cannot_run'
    assert err.value.message.startswith('cannot run %s: ' % (tmp_path / 'no-such-binary'))


def test_bytes_that_are_not_text_do_not_break_the_run():
    rc, out, err = command.run([sys.executable, '-c', 'import os; os.write(1, b"a\\xff\\xfeb\\n")'], 10)
    assert rc == 0 and out.startswith('a') and out.endswith('b\n') and '\ufffd' in out


def test_check_hands_back_stdout_on_success():
    assert command.check(sh('echo fine'), 10) == 'fine\n'


@pytest.mark.parametrize('script, said', [
    ('echo partial; echo "sacct: error: bad time" >&2; exit 2', 'sacct: error: bad time'),
    ('echo "only on stdout"; exit 2', 'only on stdout'),
])
def test_check_takes_a_non_zero_exit_as_a_failure(script, said):
    with pytest.raises(command.CommandError) as err:
        command.check(sh(script), 10, 'sacct -S x')
    assert err.value.code == 'failed'
    assert err.value.message == 'sacct -S x failed (rc 2): %s' % said
    assert err.value.rc == 2
    assert err.value.stdout.startswith(('partial', 'only'))


def test_check_passes_on_the_timeout():
    with pytest.raises(command.CommandError) as err:
        command.check(['sleep', '30'], 0.2, 'sacct')
    assert err.value.code == 'timeout'


def test_slurm_client_variables_do_not_reach_the_command(monkeypatch):
    """SLURM_TIME_FORMAT set for root made every time of the GPU report unreadable."""
    monkeypatch.setenv('SLURM_TIME_FORMAT', 'relative')
    monkeypatch.setenv('SQUEUE_FORMAT', '%i')
    monkeypatch.setenv('SACCT_FORMAT', 'jobid')
    monkeypatch.setenv('SLURM_CLUSTERS', 'other')
    monkeypatch.setenv('SLURM_CONF', '/etc/slurm/slurm.conf')
    monkeypatch.setenv('GPUHPC_KEPT', 'yes')
    rc, out = command.run(['env'], 10)[:2]
    names = [line.split('=', 1)[0] for line in out.splitlines()]
    assert rc == 0
    assert not {'SLURM_TIME_FORMAT', 'SQUEUE_FORMAT', 'SACCT_FORMAT', 'SLURM_CLUSTERS'} & set(names)
    assert {'SLURM_CONF', 'GPUHPC_KEPT', 'PATH'} <= set(names)
