"""The Day-2 playbooks act only on an explicit target: without one they stop
before any task reaches a host. Run against local hosts (nothing remote);
a task that gets past the check fails on the missing scontrol, which shows
it was reached."""
import pytest

from local_play import inventory, play

HOSTS = inventory(dict(slurm_controller=dict(ctl=None), slurm_compute={'gpu-01': None, 'gpu-02': None}))
DRAIN = '''
- name: Drain
  ansible.builtin.import_playbook: gpuhpc.slurm.drain
'''


@pytest.mark.parametrize('extra', [{}, dict(drain_reason='firmware', drain_requeue=True),
                                   dict(drain_state='resumed')])
def test_drain_without_a_target_is_refused(tmp_path, extra):
    rc, out = play(tmp_path, DRAIN, HOSTS, extra)[:2]
    assert rc != 0
    assert 'drain.yml acts on the nodes named: give --limit (e.g. --limit gpu-07) or drain_nodes' in out, out
    assert 'TASK [Drain | the nodes' not in out, out


@pytest.mark.parametrize('extra, args', [({}, ['--limit', 'gpu-01']), (dict(drain_nodes='gpu-[01-02]'), [])])
def test_drain_with_a_target_goes_on(tmp_path, extra, args):
    out = play(tmp_path, DRAIN, HOSTS, dict(extra, drain_reason='firmware'), args=args)[1]
    assert 'drain.yml acts on the nodes named' not in out, out
    assert 'TASK [Drain | the nodes drained]' in out, out
