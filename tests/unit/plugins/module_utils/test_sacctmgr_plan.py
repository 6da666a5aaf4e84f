"""sacctmgr planning: the batched commands, the changes and the diff (pure parts)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_plan as sp
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import SacctmgrError


def state(**extra):
    base = dict(cluster='gpulab', tres={'cpu', 'mem', 'node', 'billing', 'gres/gpu'},
                qos={'normal': {}}, accounts={'root': dict(description='default root account', organization='root')},
                users={'root': dict(default_account='root', admin_level='administrator')},
                assocs={('root', ''): dict(parent=None), ('root', 'root'): dict(parent=None)})
    base.update(extra)
    return base


def test_users_that_need_the_same_change_share_one_command():
    accounts = [dict(name='team%d' % i, fairshare=10) for i in range(3)]
    users = [dict(name='u%04d' % i, default_account='team%d' % (i % 3)) for i in range(300)]
    plan = sp.plan_all(state(), accounts=accounts, users=users)
    commands = [' '.join(a) for a, dummy in plan.steps]
    assert len(commands) == 1 + 3  # the accounts in one, users grouped by account
    assert commands[0] == 'add account name=team0,team1,team2 cluster=gpulab parent=root fairshare=10'
    assert all(c.startswith('add user name=u') for c in commands[1:])
    assert len(plan.changes) == 303


def test_parents_before_children_and_qos_first():
    plan = sp.plan_all(state(), qos=[dict(name='gpu', max_tres_per_user={'gres/gpu': 2})],
                       accounts=[dict(name='vision', parent='research', qos=['normal', 'gpu']),
                                 dict(name='research')])
    commands = [' '.join(a) for a, dummy in plan.steps]
    assert commands == [
        'add qos name=gpu maxtresperuser=gres/gpu=2',
        'add account name=research cluster=gpulab parent=root',
        'add account name=vision cluster=gpulab parent=research qos=gpu,normal',
    ]


def test_only_changed_fields_are_sent():
    current = state(qos={'normal': {}, 'gpu': dict(priority=10, max_tres_per_user={'gres/gpu': 2}, max_wall=2880)})
    plan = sp.plan_all(current, qos=[dict(name='gpu', priority=10, max_tres_per_user='gres/gpu=4',
                                          max_wall='48:00:00')])
    assert [' '.join(a) for a, dummy in plan.steps] == ['modify qos where name=gpu set maxtresperuser=gres/gpu=4']
    assert plan.before['qos'] == {'gpu': {'max_tres_per_user': 'gres/gpu=2'}}
    assert plan.after['qos'] == {'gpu': {'max_tres_per_user': 'gres/gpu=4'}}


def test_a_tres_no_longer_wanted_is_cleared():
    current = state(qos={'normal': {}, 'gpu': dict(grp_tres={'gres/gpu': 2, 'cpu': 64})})
    plan = sp.plan_all(current, qos=[dict(name='gpu', grp_tres={'gres/gpu': 2})])
    assert [' '.join(a) for a, dummy in plan.steps] == ['modify qos where name=gpu set grptres=gres/gpu=2,cpu=-1']


def test_nothing_to_do():
    current = state(qos={'normal': {}, 'gpu': dict(max_wall=240)})
    plan = sp.plan_all(current, qos=[dict(name='gpu', max_wall='04:00:00')])
    assert plan.steps == [] and plan.changes == []


@pytest.mark.parametrize('kwargs, code, words', [
    (dict(accounts=[dict(name='vision', qos=['gpu'])]), 'unknown_qos', ['vision', 'gpu', 'add the QoS first']),
    (dict(accounts=[dict(name='vision', parent='research')]), 'parent_missing', ['vision', 'research']),
    (dict(users=[dict(name='alice', default_account='vision')]), 'account_missing', ['alice', 'vision']),
    (dict(qos=[dict(name='gpu', grp_tres={'gres/gpu': 2})]), 'unknown_tres',
     ['gpu', 'gres/gpu', 'AccountingStorageTRES']),
    (dict(qos=[dict(name='normal', state='absent')]), 'protected', ['normal']),
    (dict(users=[dict(name='alice')]), 'bad_value', ['alice', 'default_account']),
])
def test_errors_name_the_entity_and_the_fix(kwargs, code, words):
    current = state(tres={'cpu', 'mem'})
    with pytest.raises(SacctmgrError) as err:
        sp.plan_all(current, **kwargs)
    assert err.value.code == code
    for word in words:
        assert word in err.value.message + err.value.fix


def test_purge_never_removes_root_or_normal():
    current = state(qos={'normal': {}, 'old': {}},
                    assocs={('root', ''): dict(parent=None), ('root', 'root'): dict(parent=None),
                            ('gone', ''): dict(parent='root'), ('gone', 'x'): dict(parent='gone')})
    plan = sp.plan_all(current, qos=[dict(name='gpu')], accounts=[dict(name='kept')],
                       users=[dict(name='y', default_account='kept')], purge=True)
    commands = [' '.join(a) for a, dummy in plan.steps]
    assert 'delete user where name=x cluster=gpulab' in commands
    assert 'delete account where name=gone cluster=gpulab' in commands
    assert 'delete qos where name=old' in commands
    assert not any('root' in c or 'normal' in c for c in commands if c.startswith('delete'))


def test_removing_a_user_removes_only_their_associations():
    current = state(users={'x': dict(default_account='a', admin_level='none')},
                    assocs={('a', ''): dict(parent='root'), ('b', ''): dict(parent='root'),
                            ('a', 'x'): dict(parent='a'), ('b', 'x'): dict(parent='b')})
    whole = sp.plan_all(current, users=[dict(name='x', state='absent')])
    assert [' '.join(a) for a, dummy in whole.steps] == ['delete user where name=x cluster=gpulab']
    one = sp.plan_all(current, users=[dict(name='x', state='absent', accounts=['b'])])
    assert [' '.join(a) for a, dummy in one.steps] == ['delete user where name=x account=b cluster=gpulab']


def test_account_tree_filter():
    from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import account_tree
    flat = account_tree([dict(name='research', children=[dict(name='vision', children=[dict(name='cv')]),
                                                         dict(name='nlp')])])
    assert [(a['name'], a.get('parent')) for a in flat] == [
        ('research', None), ('vision', 'research'), ('cv', 'vision'), ('nlp', 'research')]


def test_qos_alone_needs_no_cluster():
    plan = sp.plan_all(state(cluster=None), qos=[dict(name='gpu', priority=5)])
    assert [' '.join(a) for a, dummy in plan.steps] == ['add qos name=gpu priority=5']


def commands_of(plan):
    return [' '.join(a) for a, dummy in plan.steps]


LDAP = state(users={'root': dict(default_account='root', admin_level='administrator'),
                    'kenji.sato': dict(default_account='vision', admin_level='none')},
             assocs={('root', ''): dict(parent=None), ('root', 'root'): dict(parent=None),
                     ('vision', ''): dict(parent='root'), ('vision', 'kenji.sato'): dict(parent='vision')})


def test_user_names_are_compared_as_slurm_stores_them():
    """Slurm lower-cases user names (no PreserveCaseUser): Kenji.Sato is kenji.sato."""
    assert commands_of(sp.plan_all(LDAP, users=[dict(name='Kenji.Sato', default_account='Vision')])) == []
    assert commands_of(sp.plan_all(LDAP, users=[dict(name='Kenji.Sato', default_account='vision')],
                                   purge=True)) == []
    assert commands_of(sp.plan_all(LDAP, users=[dict(name='Kenji.Sato', state='absent')])) == [
        'delete user where name=kenji.sato cluster=gpulab']


def test_preserve_case_user_keeps_the_case():
    plan = sp.plan_all(LDAP, users=[dict(name='Kenji.Sato', default_account='vision')], preserve_case_user=True)
    assert commands_of(plan) == ['add user name=Kenji.Sato cluster=gpulab account=vision defaultaccount=vision']


def test_two_names_slurm_stores_as_one_are_refused():
    with pytest.raises(SacctmgrError) as err:
        sp.plan_all(LDAP, users=[dict(name='Kenji.Sato', default_account='vision'),
                                 dict(name='kenji.sato', default_account='vision')])
    assert err.value.code == 'duplicate'
    assert "users[0] 'Kenji.Sato' and users[1] 'kenji.sato'" in err.value.message
    assert 'PreserveCaseUser' in err.value.message


@pytest.mark.parametrize('kwargs', [
    dict(users=[dict(name='a,b', default_account='vision')]),
    dict(users=[dict(name='two words', default_account='vision')]),
    dict(accounts=[dict(name='x=y')]),
    dict(qos=[dict(name='gpu[1-2]')]),
    dict(users=[dict(name='ok', default_account='vi sion')]),
    dict(accounts=[dict(name='ok', parent='a,b')]),
])
def test_names_slurm_would_split_or_rewrite_are_refused(kwargs):
    with pytest.raises(SacctmgrError) as err:
        sp.plan_all(LDAP, **kwargs)
    assert err.value.code == 'bad_name'
    assert 'which sacctmgr splits or rewrites' in err.value.message


QOS_SET = state(qos={'normal': {}, 'gpu': dict(flags=frozenset(['denyonlimit']), preempt=frozenset(['normal']))},
                assocs={('root', ''): dict(parent=None), ('vision', ''): dict(parent='root', qos=frozenset(['gpu']))})


def test_empty_lists_clear_and_then_are_equal():
    plan = sp.plan_all(QOS_SET, qos=[dict(name='gpu', flags=[], preempt=[])],
                       accounts=[dict(name='vision', qos=[])])
    assert commands_of(plan) == ['modify qos where name=gpu set flags=-1 preempt=',
                                 'modify account where name=vision cluster=gpulab set qos=']
    cleared = state(qos={'normal': {}, 'gpu': dict(flags=frozenset(), preempt=frozenset())},
                    assocs={('root', ''): dict(parent=None), ('vision', ''): dict(parent='root', qos=frozenset())})
    assert commands_of(sp.plan_all(cleared, qos=[dict(name='gpu', flags=[], preempt=[])],
                                   accounts=[dict(name='vision', qos=[])])) == []


def test_a_new_entity_sends_no_empty_list():
    plan = sp.plan_all(state(), qos=[dict(name='new', flags=[], preempt=[])], accounts=[dict(name='team', qos=[])])
    assert commands_of(plan) == ['add qos name=new', 'add account name=team cluster=gpulab parent=root']


TREE = state(assocs={('root', ''): dict(parent=None), ('research', ''): dict(parent='root'),
                     ('vision', ''): dict(parent='research'), ('other', ''): dict(parent='root'),
                     ('old', ''): dict(parent='other')})


def test_purge_never_deletes_an_ancestor_of_a_listed_account():
    plan = sp.plan_all(TREE, accounts=[dict(name='vision', parent='research')], purge=True)
    assert commands_of(plan) == ['delete account where name=old,other cluster=gpulab']


def test_purge_deletes_a_former_parent_once_its_child_has_moved():
    plan = sp.plan_all(TREE, accounts=[dict(name='vision')], purge=True)
    assert commands_of(plan) == ['modify account where name=vision cluster=gpulab set parent=root',
                                 'delete account where name=old,other,research cluster=gpulab']


def test_descriptions_are_compared_as_sacctmgr_stores_them():
    current = state(accounts={'root': {}, 'vision': dict(description='say `hi` (cv)', organization='lab')},
                    assocs={('root', ''): dict(parent=None), ('vision', ''): dict(parent='root')})
    plan = sp.plan_all(current, accounts=[dict(name='vision', description='Say "hi" (CV)', organization="'Lab'")])
    assert commands_of(plan) == []


# --- the Plan's bookkeeping -------------------------------------------------------

def test_plan_added_and_modified_fill_changes_and_diff():
    plan = sp.Plan()
    plan.added('qos', 'gpu', dict(flags=frozenset(['b', 'a']), grp_tres={'gres/gpu': 2}))
    plan.modified('account', 'vision', dict(fairshare=70), dict(fairshare=60, grp_jobs=5))
    assert plan.changes == [
        dict(kind='qos', name='gpu', action='add', fields=dict(flags=['a', 'b'], grp_tres='gres/gpu=2')),
        dict(kind='account', name='vision', action='modify', fields=dict(fairshare=70))]
    assert plan.before == dict(qos={}, accounts=dict(vision=dict(fairshare=60)), users={})
    assert plan.after == dict(qos=dict(gpu=dict(flags=['a', 'b'], grp_tres='gres/gpu=2')),
                              accounts=dict(vision=dict(fairshare=70)), users={})
    assert plan.steps == []


def test_plan_removing_records_the_change_after_the_kinds_others():
    plan = sp.Plan()
    plan.removing('qos', 'old', dict(priority=1))
    plan.added('qos', 'new', {})
    assert [c['name'] for c in plan.changes] == ['new']
    assert plan.before['qos'] == dict(old=dict(priority=1))
    plan.removals('qos')
    plan.removals('qos')  # once only
    assert plan.changes[1:] == [dict(kind='qos', name='old', action='delete', fields={})]


def test_plan_removed_records_at_once_and_to_delete_only_queues_the_command():
    plan = sp.Plan()
    plan.removed('user', 'x', dict(accounts=['a', 'b']), dict(accounts=['a']), dict(accounts=['b']))
    plan.to_delete('user', 'y')
    plan.removals('user')
    assert plan.changes == [dict(kind='user', name='x', action='delete', fields=dict(accounts=['b']))]
    assert plan.after['users'] == dict(x=dict(accounts=['a']))
    assert plan.deletes['user'] == ['y']


def test_plan_purge_skips_the_listed_and_the_kept_in_order():
    plan = sp.Plan()
    plan.purge('account', ['c', 'a', 'root', 'b', 'keep'], set(['b']), set(['root', 'keep']),
               lambda name: dict(name=name))
    plan.removals('account')
    assert [c['name'] for c in plan.changes] == ['c', 'a']
    assert list(plan.before['accounts']) == ['c', 'a']
    assert plan.deletes['account'] == ['c', 'a']


def test_plan_deletions_run_users_then_accounts_then_qos():
    plan = sp.Plan()
    for kind, name in (('qos', 'q2'), ('qos', 'q1'), ('account', 'a'), ('user', 'u'), ('user', 'u')):
        plan.to_delete(kind, name)
    plan.deletions(['cluster=c'])
    assert [' '.join(args) for args, dummy in plan.steps] == [
        'delete user where name=u cluster=c', 'delete account where name=a cluster=c', 'delete qos where name=q1,q2']
    assert [labels for dummy, labels in plan.steps] == [['u'], ['a'], ['q1', 'q2']]
    empty = sp.Plan()
    empty.deletions(['cluster=c'])
    assert empty.steps == []


def test_plan_batch_makes_one_command_per_group():
    plan = sp.Plan()
    plan.batch({('b=1',): ['y', 'x'], ('a=1',): ['z']}, lambda names, key: ['set', names] + list(key))
    assert plan.steps == [(['set', 'z', 'a=1'], ['z']), (['set', 'x,y', 'b=1'], ['x', 'y'])]


def test_changes_follow_the_commands_of_each_kind():
    """QoS and accounts removed are reported after the kind's adds and changes (their
    commands run last); a user removed is reported where listed, and purged users last."""
    current = state(qos={'normal': {}, 'old': dict(priority=1), 'gone': {}},
                    users={'x': dict(default_account='a', admin_level='none')},
                    assocs={('root', ''): dict(parent=None), ('a', ''): dict(parent='root'),
                            ('b', ''): dict(parent='root'), ('a', 'x'): dict(parent='a'),
                            ('a', 'w'): dict(parent='a')})
    plan = sp.plan_all(current, qos=[dict(name='old', state='absent'), dict(name='new')],
                       accounts=[dict(name='b', state='absent'), dict(name='a', fairshare=5)],
                       users=[dict(name='x', state='absent'), dict(name='y', default_account='a')], purge=True)
    assert [(c['kind'], c['name'], c['action']) for c in plan.changes] == [
        ('qos', 'new', 'add'), ('qos', 'old', 'delete'), ('qos', 'gone', 'delete'),
        ('account', 'a', 'modify'), ('account', 'b', 'delete'),
        ('user', 'x', 'delete'), ('user', 'y', 'add'), ('user', 'w', 'delete')]
    assert commands_of(plan)[-3:] == ['delete user where name=w,x cluster=gpulab',
                                      'delete account where name=b cluster=gpulab',
                                      'delete qos where name=gone,old']
    assert plan.before['users'] == dict(x=dict(accounts=['a']), w=dict(accounts=['a']))


def test_a_qos_purge_keeps_what_another_cluster_uses():
    # on a slurmdbd several clusters share, purge deleted the other clusters' QoS (QoS are global)
    current = state(qos={'normal': {}, 'theirs': {}, 'ours': {}, 'unused': {}},
                    qos_use={'theirs': {'other', 'gpulab'}, 'ours': {'gpulab'}, 'normal': {'other'}})
    plan = sp.plan_all(current, qos=[dict(name='gpu')], purge=True)
    assert commands_of(plan) == ['add qos name=gpu', 'delete qos where name=ours,unused']


def test_a_default_account_changes_on_this_cluster_only():
    current = state(users={'root': dict(default_account='root', admin_level='administrator'),
                           'ana': dict(default_account='a', admin_level='none')},
                    assocs={('root', ''): dict(parent=None), ('a', ''): dict(parent='root'),
                            ('b', ''): dict(parent='root'), ('a', 'ana'): dict(parent='a'),
                            ('b', 'ana'): dict(parent='b')})
    plan = sp.plan_all(current, users=[dict(name='ana', default_account='b', accounts=['a'], admin_level='operator')])
    assert sorted(commands_of(plan)) == [
        'modify user where name=ana cluster=gpulab set defaultaccount=b',
        'modify user where name=ana set adminlevel=operator',
    ]
