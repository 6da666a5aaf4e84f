"""sacctmgr running and reading, on output captured from the lab's real Slurm
(see tests/unit/fixtures/sacctmgr/capture.sh): one file per Slurm version,
each holding the commands, exit statuses and outputs of the lab's org chart
(inventory/lab/group_vars/slurm_controller/accounting.yml) and of writes
that fail. And slurmdbd.conf read as slurmdbd reads it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os

import pytest
import yaml
from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import account_tree
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_plan as sp
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_read as st
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_run as sr
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_values as sv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'sacctmgr', '*.json')))
LAB_CHART = os.path.join(ROOT, 'inventory', 'lab', 'group_vars', 'slurm_controller', 'accounting.yml')


class Replay(sr.Runner):
    """A Runner that answers from a capture instead of running sacctmgr."""

    def __init__(self, capture):
        super(Replay, self).__init__('sacctmgr')
        self.answers = dict((tuple(c['args']), (c['rc'], c['stdout'], c['stderr'])) for c in capture['commands'])

    def _run(self, args):
        self.calls += 1
        return self.answers[tuple(args)]


def load(path):
    with open(path) as f:
        return json.load(f)


def test_there_are_captures_of_both_lab_releases():
    versions = [load(p)['version'] for p in FIXTURES]
    assert any('22.05' in v for v in versions) and any('24.11' in v for v in versions), versions


@pytest.fixture(params=FIXTURES, ids=lambda p: os.path.basename(p)[:-5])
def capture(request):
    return load(request.param)


def test_read_state(capture):
    runner = Replay(capture)
    state = st.read_state(runner, 'gpulab', need_tres=True)
    assert runner.calls == 6
    assert state['cluster'] == 'gpulab'
    assert 'gres/gpu' in state['tres']
    assert state['qos']['gpu1']['max_tres_per_user'] == {'gres/gpu': 1}
    assert state['qos']['gpu1']['max_wall'] == 240
    assert state['qos']['gpu1']['description'] == 'one gpu per user'
    vision = state['assocs'][('vision', '')]
    assert vision['parent'] == 'research'
    assert vision['grp_tres'] == {'gres/gpu': 2}
    assert vision['qos'] == frozenset(['normal', 'gpu1'])
    assert vision['fairshare'] == 60
    # WOPLimits: the user association shows no limits inherited from vision
    assert state['assocs'][('vision', 'vic')]['grp_tres'] == {}
    assert state['users']['vic'] == dict(default_account='vision', admin_level='none')
    assert state['users']['root']['admin_level'] == 'administrator'


def test_the_lab_chart_is_already_applied(capture):
    with open(LAB_CHART) as f:
        chart = yaml.safe_load(f)
    state = st.read_state(Replay(capture), 'gpulab', need_tres=True)
    plan = sp.plan_all(state, chart['slurm_accounting_qos'], account_tree(chart['slurm_accounting_accounts']),
                       chart['slurm_accounting_users'])
    assert plan.steps == [], plan.changes


@pytest.mark.parametrize('words, code', [
    ('parent=no-such-parent', 'parent_missing'),
    ('qos=no-such-qos', 'unknown_qos'),
    ('account=no-such-account', 'account_missing'),
    ('grptres=gres/nosuch=1', 'unknown_tres'),
    ('cluster=no-such-cluster', 'cluster_not_registered'),
])
def test_failed_writes_are_named(capture, words, code):
    args = next(c['args'] for c in capture['commands'] if words in c['args'])
    runner = Replay(capture)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(args[1:])
    assert err.value.code == code


@pytest.mark.parametrize('words', ['name=no-such-qos', 'name=vision'])
def test_nothing_to_do_is_not_an_error(capture, words):
    args = next(c['args'] for c in capture['commands'] if words in c['args'] and c['args'][0] == '-i')
    Replay(capture).write(args[1:])


def test_slurmdbd_down(capture):
    runner = Replay(capture)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.read('qos', ['Name'])
    assert err.value.code == 'slurmdbd_unreachable'
    assert 'slurmdbd' in err.value.fix


def test_a_failure_half_way_says_what_was_applied(capture):
    """The second command meets sacctmgr's real answer for a missing parent."""
    refused = next(c for c in capture['commands'] if 'parent=no-such-parent' in c['args'])

    class HalfWay(Replay):
        def _run(self, args):
            self.calls += 1
            return (refused['rc'], refused['stdout'], refused['stderr']) if self.calls == 2 else (0, '', '')

    plan = sp.Plan()
    plan.add(['add', 'qos', 'name=a'], ['a'])
    plan.add(['add', 'account', 'name=orphan', 'cluster=gpulab', 'parent=no-such-parent'], ['orphan'])
    plan.add(['add', 'user', 'name=u', 'cluster=gpulab', 'account=orphan'], ['u'])
    with pytest.raises(sr.SacctmgrError) as err:
        sr.apply(HalfWay(capture), plan)
    assert err.value.code == 'parent_missing'
    assert err.value.applied == ['add qos name=a']
    assert err.value.not_applied == ['add account name=orphan cluster=gpulab parent=no-such-parent',
                                     'add user name=u cluster=gpulab account=orphan']


def answer(capture, *words):
    """The captured command whose arguments hold all of ``words``."""
    return next(c for c in capture['commands'] if all(w in c['args'] for w in words))


def test_slurm_lower_cases_user_names(capture):
    added = answer(capture, 'name=Kenji.Sato', 'add')
    assert added['rc'] == 0 and 'kenji.sato' in added['stdout']
    assert answer(capture, 'name=kenji.sato', 'show')['stdout'].split('|')[0] == 'kenji.sato'
    assert sv.entity_name('user', 'Kenji.Sato') == 'kenji.sato'


def test_empty_lists(capture):
    """'' (two characters) is a flag or QoS name; -1 and an empty value clear."""
    runner = Replay(capture)
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(answer(capture, "flags=''")['args'][1:])
    assert err.value.code == 'bad_qos_flag'
    cleared = answer(capture, 'flags=-1', 'preempt=')
    runner.write(cleared['args'][1:])
    assert sv.set_clause(sv.QOS_FIELDS, dict(flags=frozenset(), preempt=frozenset())) == ['flags=-1', 'preempt=']
    name, flags, preempt = answer(capture, 'format=Name,Flags,Preempt')['stdout'].strip().split('|')[:3]
    assert (sv.normalise('set', flags, 'f'), sv.normalise('set', preempt, 'p')) == (frozenset(), frozenset())
    rows = [line.split('|') for line in answer(capture, 'format=Account,User,QOS')['stdout'].splitlines()]
    # cleared (capqos) and never given (capnoqos) read the same: empty
    assert sorted((r[0], sv.normalise('set', r[2], 'q')) for r in rows) == [('capnoqos', frozenset()),
                                                                            ('capqos', frozenset())]


def test_descriptions_read_back_as_sacctmgr_stores_them(capture):
    added = answer(capture, 'name=capdesc', 'add')
    # the request is echoed on stdout, error phrase included: still a success
    assert 'permission denied' in added['stdout']
    Replay(capture).write(added['args'][1:])
    name, description, organization = answer(capture, 'name=capdesc', 'show')['stdout'].strip().split('|')
    assert sv.normalise('text', 'say "hi" Permission denied', 'd') == description
    assert sv.normalise('text', "'quoted' org", 'o') == organization


@pytest.mark.parametrize('words, code, named', [
    (('delete', 'name=capjobs'), 'jobs_running', 'A = capjobs'),
    (('delete', 'name=capuser', 'account=capdef'), 'default_account', 'U = capuser'),
    (('delete', 'account', 'name=capdef'), 'default_account', 'U = capuser'),
])
def test_refused_deletions_name_the_association(capture, words, code, named):
    runner = Replay(capture)
    if code == 'default_account' and ' 22.05.' in capture['version']:
        # 22.05 deletes a user's default account association (24.11 refuses)
        assert 'Deleting' in runner.write(answer(capture, *words)['args'][1:])
        return
    with pytest.raises(sr.SacctmgrError) as err:
        runner.write(answer(capture, *words)['args'][1:])
    assert err.value.code == code
    assert named in err.value.message


@pytest.mark.parametrize('text, keep', [
    ('StoragePass=x\nParameters=PreserveCaseUser\n', True),
    ('parameters=preservecaseuser,other\n', True),
    ('#Parameters=PreserveCaseUser\n', False),
    ('StorageLoc=slurm_acct_db\n', False),
])
def test_preserve_case_user_is_read_as_slurmdbd_reads_it(tmp_path, text, keep):
    conf = tmp_path / 'slurmdbd.conf'
    conf.write_text(text)
    assert st.preserve_case_user(str(conf)) is keep
    assert st.preserve_case_user(str(tmp_path / 'missing')) is False
