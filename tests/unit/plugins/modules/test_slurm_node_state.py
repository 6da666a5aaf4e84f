"""slurm_node_state against a fake scontrol/squeue in place of command.run(), the runner that
command.check() calls (the parsing is tested on real output in test_nodestate)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic
from ansible_collections.gpuhpc.slurm.plugins.module_utils import command, hostlist
from ansible_collections.gpuhpc.slurm.plugins.modules import slurm_node_state

REAL_RUN = command.run

LINE = ('NodeName={name} Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 Gres=gpu:2 NodeAddr={name} '
        'OS=Linux 6.1 #1 SMP  State={state} ThreadsPerCore=1 Partitions=gpu  CfgTRES=cpu=2{reason}')


class FakeSlurm(object):
    """Nodes with jobs that end after `polls` reads; records every command."""

    def __init__(self, nodes, polls=2):
        self.nodes = nodes  # name -> [base, flags, jobs]
        self.polls = polls
        self.calls = []
        self.timeouts = []
        self.hang = ()  # commands (e.g. 'squeue') that never answer, like a slurmctld that is gone
        self.registers = True

    def line(self, name):
        base, flags, jobs = self.nodes[name][:3]
        reason = self.nodes[name][3] if len(self.nodes[name]) > 3 else 'x [root@2026-12-02T00:00:00]'
        if jobs and base == 'IDLE':
            base = 'ALLOCATED'
        return LINE.format(name=name, state='+'.join([base] + flags),
                           reason=' Reason=' + reason if 'DRAIN' in flags else '')

    def __call__(self, argv, timeout=None, what=None):
        cmd = [a.rsplit('/', 1)[-1] for a in argv[:1]] + list(argv[1:])
        self.calls.append(cmd)
        self.timeouts.append(timeout)
        if ' '.join(cmd[:3]).startswith(self.hang):
            return REAL_RUN(['sleep', '30'], timeout, what)
        if cmd[:3] == ['scontrol', 'show', 'node']:
            names = hostlist.expand(cmd[4])
            unknown = [n for n in names if n not in self.nodes]
            if unknown:
                return 1, '', 'Node %s not found\n' % unknown[0]
            self.polls -= 1
            if self.polls <= 0:
                for node in self.nodes.values():
                    node[2] = []
                    if self.registers:  # slurmd, restarted with the new line, registers
                        node[1][:] = [f for f in node[1] if f != 'INVALID_REG']
            return 0, '\n'.join(self.line(n) for n in names) + '\n', ''
        if cmd[:2] == ['scontrol', 'update']:
            names = hostlist.expand(cmd[2].split('=', 1)[1])
            for n in names:
                flags = self.nodes[n][1]
                if cmd[3] == 'State=DRAIN':
                    flags.append('DRAIN')
                elif cmd[3] == 'State=RESUME' and 'INVALID_REG' in flags:
                    pass  # slurmctld drains it again at once
                else:
                    flags[:] = [f for f in flags if f != 'DRAIN']
                    if self.nodes[n][0] == 'DOWN':
                        self.nodes[n][0] = 'IDLE'
            return 0, '', ''
        if cmd[:2] == ['scontrol', 'requeue']:
            for node in self.nodes.values():
                node[2] = []
            return 0, '', ''
        if cmd[0] == 'squeue':
            names = hostlist.expand(cmd[cmd.index('-w') + 1])
            return 0, ''.join('%s alice %s\n' % (j, n) for n in names for j in self.nodes[n][2]), ''
        raise AssertionError(cmd)


@pytest.fixture
def slurm(monkeypatch):
    def make(nodes, polls=2):
        fake = FakeSlurm(nodes, polls)
        monkeypatch.setattr(command, 'run', fake)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, **kw: '/usr/bin/' + name)
        monkeypatch.setattr(slurm_node_state, 'POLL_SECONDS', 0)
        return fake
    return make


def updates(fake):
    return [c for c in fake.calls if c[:2] in (['scontrol', 'update'], ['scontrol', 'requeue'])]


def test_drain_waits_for_the_jobs_then_a_rerun_changes_nothing(run_module, slurm):
    fake = slurm({'gpu-01': ['IDLE', [], ['41']], 'gpu-02': ['IDLE', [], []]})
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-[01-02]'], state='drained', reason='rolling restart'))
    assert result['changed'] and result['changed_nodes'] == ['gpu-01', 'gpu-02']
    assert result['nodes'] == {'gpu-01': 'IDLE+DRAIN', 'gpu-02': 'IDLE+DRAIN'}
    assert updates(fake) == [['scontrol', 'update', 'NodeName=gpu-[01-02]', 'State=DRAIN', 'Reason=rolling restart']]
    again = run_module(slurm_node_state.main, dict(nodes=['gpu-01', 'gpu-02'], state='drained', reason='other'))
    assert not again['changed'] and again['changed_nodes'] == []
    assert len(updates(fake)) == 1


def test_a_node_drained_by_someone_else_is_not_ours_to_resume(run_module, slurm):
    fake = slurm({'gpu-01': ['IDLE', ['DRAIN'], []], 'gpu-02': ['IDLE', [], []]})
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01', 'gpu-02'], state='drained', reason='r'))
    assert result['changed_nodes'] == ['gpu-02']
    resumed = run_module(slurm_node_state.main, dict(nodes=result['changed_nodes'], state='resumed'))
    assert resumed['changed_nodes'] == ['gpu-02']
    assert fake.nodes['gpu-01'][1] == ['DRAIN'] and fake.nodes['gpu-02'][1] == []


def test_a_node_an_admin_set_down_stays_down_through_a_drain_and_resume(run_module, slurm):
    fake = slurm({'gpu-01': ['DOWN', [], []], 'gpu-02': ['IDLE', [], ['41']]})
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-[01-02]'], state='drained', reason='roll'))
    assert result['changed_nodes'] == ['gpu-02']
    assert updates(fake) == [['scontrol', 'update', 'NodeName=gpu-02', 'State=DRAIN', 'Reason=roll']]
    run_module(slurm_node_state.main, dict(nodes=result['changed_nodes'], state='resumed'))
    assert fake.nodes['gpu-01'][:2] == ['DOWN', []]


SHORT = 'gres/gpu count reported lower than configured (2 < 3) [slurm@2026-12-07T08:57:21]'


def test_a_node_slurmctld_drained_while_its_new_line_reached_slurmd_is_resumed_once_it_registers(run_module, slurm):
    # a100-02 got a third GPU: slurmctld restarted on the new line and drained it at the old
    # slurmd's registration; a100-01 was drained by a person, cpu-01 by Slurm for something else
    fake = slurm({'a100-02': ['IDLE', ['DRAIN', 'INVALID_REG'], ['41'], SHORT],
                  'a100-01': ['IDLE', ['DRAIN'], [], 'gres/gpu count too low (2 < 4) [root@2026-12-07T08:00:00]'],
                  'cpu-01': ['IDLE', ['DRAIN'], [], 'Kill task failed [slurm@2026-12-07T08:00:00]']})
    result = run_module(slurm_node_state.main, dict(nodes=['a100-[01-02]', 'cpu-01'], state='registered'))
    assert result['changed'] and result['changed_nodes'] == ['a100-02']
    assert updates(fake) == [['scontrol', 'update', 'NodeName=a100-02', 'State=RESUME']]
    assert fake.nodes['a100-02'][1] == [] and fake.nodes['a100-01'][1] == ['DRAIN'] and fake.nodes['cpu-01'][1] == ['DRAIN']
    again = run_module(slurm_node_state.main, dict(nodes=['a100-02'], state='registered'))
    assert not again['changed'] and len(updates(fake)) == 1


def test_a_node_a_person_took_out_before_the_change_stays_out_whatever_slurm_wrote_since(run_module, slurm):
    # Slurm 23.11 and later put their own reason over the person's at the short registration
    fake = slurm({'a100-02': ['IDLE', ['DRAIN'], [], SHORT]})
    result = run_module(slurm_node_state.main, dict(nodes=['a100-02'], state='registered', keep=['a100-02']))
    assert not result['changed'] and updates(fake) == [] and fake.nodes['a100-02'][1] == ['DRAIN']


def test_a_node_that_keeps_registering_short_of_its_line_fails_with_slurms_reason(run_module, slurm):
    fake = slurm({'a100-02': ['IDLE', ['DRAIN', 'INVALID_REG'], [], SHORT]})
    fake.registers = False  # the inventory says 3 GPUs, the node has 2
    result = run_module(slurm_node_state.main, dict(nodes=['a100-02'], state='registered', timeout=0))
    assert result['failed']
    assert result['msg'] == ('after 0s, a100-02 have not registered with their slurm.conf line: '
                             'a100-02 IDLE+DRAIN+INVALID_REG (gres/gpu count reported lower than configured (2 < 3))')
    assert 'slurm_node_gpus' in result['fix'] and updates(fake) == []


def test_registered_in_check_mode_names_what_it_would_resume(run_module, slurm):
    fake = slurm({'a100-02': ['IDLE', ['DRAIN'], [], SHORT]})
    result = run_module(slurm_node_state.main, dict(nodes=['a100-02'], state='registered'), check_mode=True)
    assert result['changed_nodes'] == ['a100-02'] and updates(fake) == []


def test_requeue_instead_of_waiting(run_module, slurm):
    fake = slurm({'gpu-01': ['IDLE', [], ['41', '7']]}, polls=100)
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='r', requeue=True))
    assert result['requeued'] == ['7', '41']
    assert updates(fake)[-1] == ['scontrol', 'requeue', '7,41']
    assert result['nodes'] == {'gpu-01': 'IDLE+DRAIN'}


def test_timeout_names_the_jobs_left(run_module, slurm):
    slurm({'gpu-01': ['IDLE', [], ['41']]}, polls=10 ** 6)
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='r', timeout=1))
    assert result['failed']
    assert result['msg'] == 'after 1s, gpu-01 still run jobs: 41 (alice on gpu-01); the nodes stay drained'
    assert result['changed_nodes'] == ['gpu-01']


def test_no_wait(run_module, slurm):
    slurm({'gpu-01': ['IDLE', [], ['41']]}, polls=10 ** 6)
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='r', timeout=0))
    assert not result.get('failed') and result['nodes'] == {'gpu-01': 'ALLOCATED+DRAIN'} and result['waited'] == 0


def test_check_mode_changes_nothing(run_module, slurm):
    fake = slurm({'gpu-01': ['DOWN', ['NOT_RESPONDING'], []]})
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='resumed'), check_mode=True)
    assert result['changed'] and result['changed_nodes'] == ['gpu-01'] and updates(fake) == []


def test_bad_input(run_module, slurm):
    slurm({'gpu-01': ['IDLE', [], []]})
    failed = run_module(slurm_node_state.main, dict(nodes=['gpu-09'], state='resumed'))
    assert failed['msg'] == 'scontrol show node failed (rc 1): Node gpu-09 not found'
    assert failed['argv'] == ['/usr/bin/scontrol', 'show', 'node', '-o', 'gpu-09'] and 'fix' not in failed
    assert 'reason' in run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained'))['msg']
    assert run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='  '))['msg'] == (
        'reason is empty: say why the nodes are drained (Slurm requires a reason)')
    assert run_module(slurm_node_state.main, dict(nodes=['gpu-[01'], state='resumed'))['msg'].startswith('nodes: ')


def test_every_command_has_the_bounded_timeout_the_docs_name(run_module, slurm):
    fake = slurm({'gpu-01': ['IDLE', [], ['41']]}, polls=100)
    run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='r', requeue=True))
    assert {c[0] for c in fake.calls} == {'scontrol', 'squeue'}
    assert fake.timeouts == [slurm_node_state.COMMAND_TIMEOUT] * len(fake.calls)
    assert 'given %s seconds' % slurm_node_state.COMMAND_TIMEOUT in ' '.join(slurm_node_state.DOCUMENTATION.split())


@pytest.mark.parametrize('hang, what, updated', [
    ('scontrol show', 'scontrol show node', []),
    ('squeue', 'squeue', [['scontrol', 'update', 'NodeName=gpu-01', 'State=DRAIN', 'Reason=r']]),
])
def test_a_command_that_does_not_answer_is_killed_and_named(run_module, slurm, monkeypatch, hang, what, updated):
    """slurmctld gone: the call is killed after COMMAND_TIMEOUT (a real process here) and the module
    fails naming it; a drain asked for before it stays."""
    fake = slurm({'gpu-01': ['IDLE', [], ['41']]}, polls=100)
    fake.hang = (hang,)
    monkeypatch.setattr(slurm_node_state, 'COMMAND_TIMEOUT', 0.5)
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='drained', reason='r', requeue=True))
    assert result['failed']
    assert result['msg'] == '%s did not finish within 0.5 s' % what
    assert result['fix'].startswith('check that slurmctld runs and answers (scontrol ping')
    assert result['argv'][0] == '/usr/bin/' + what.split()[0]
    assert updates(fake) == updated


def test_a_command_that_cannot_start_is_named(run_module, slurm, monkeypatch):
    slurm({'gpu-01': ['IDLE', [], []]})
    monkeypatch.setattr(command, 'run', REAL_RUN)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda self, name, **kw: '/nonexistent/' + name)
    result = run_module(slurm_node_state.main, dict(nodes=['gpu-01'], state='resumed'))
    assert result['failed'] and result['msg'].startswith('cannot run /nonexistent/scontrol: ')
    assert 'fix' not in result
