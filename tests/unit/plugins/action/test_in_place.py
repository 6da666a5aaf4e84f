"""The file modules' actions: what they would put in place, and that they
contact the host only where the run's file record does not show it."""
import base64
import hashlib
from unittest import mock

import pytest
from ansible.playbook.task import Task
from ansible_collections.gpuhpc.slurm.plugins.action import config_files, munge_key, slurm_config

KEY = bytes(range(64))


def action(cls, args, delegate_to=None):
    task = Task()
    task.args = args
    task.delegate_to = delegate_to
    task.async_val = 0
    play_context = mock.MagicMock(check_mode=False, diff=False)
    act = cls(task, mock.MagicMock(), play_context, loader=None, templar=None, shared_loader_obj=None)
    act._execute_module = mock.MagicMock(return_value={'changed': True, 'changed_paths': ['/etc/x']})
    return act


def record(paths):
    return {'ansible_facts': {'file_states': {'patterns': ['/etc/x', '/etc/slurm', '/etc/slurm/*',
                                                           '/etc/munge/munge.key'], 'paths': paths}}}


def f(text, mode='0644', owner='root'):
    return dict(state='file', mode=mode, owner=owner, group=owner, uid=0, gid=0,
                sha256=hashlib.sha256(text).hexdigest())


def test_config_files_in_place_contacts_no_host():
    act = action(config_files.ActionModule, {'files': [{'path': '/etc/x', 'content': 'a\n', 'mode': '0644'}]})
    result = act.run(task_vars=record({'/etc/x': f(b'a\n')}))
    assert result['changed'] is False and result['changed_paths'] == [] and result['host_contacted'] is False
    act._execute_module.assert_not_called()


@pytest.mark.parametrize('task_vars, delegate_to', [
    (record({'/etc/x': f(b'b\n')}), None),  # differs
    ({}, None),  # no record: a role used alone
    (record({'/etc/x': f(b'a\n')}), 'other-host'),  # the record is not the delegate's
])
def test_config_files_runs_the_module(task_vars, delegate_to):
    act = action(config_files.ActionModule, {'files': [{'path': '/etc/x', 'content': 'a\n'}]}, delegate_to)
    result = act.run(task_vars=task_vars)
    assert result['changed_paths'] == ['/etc/x']
    act._execute_module.assert_called_once()


def test_slurm_config_specs_are_the_modules():
    act = action(slurm_config.ActionModule, {'dir': '/etc/slurm', 'files': {'slurm.conf': 'A=1\n', 'gres.conf': None}})
    assert act.specs(act._task.args) == [
        dict(path='/etc/slurm', state='directory', owner='root', group='root', mode='0755'),
        dict(path='/etc/slurm/gres.conf', state='absent'),
        dict(path='/etc/slurm/slurm.conf', content='A=1\n', owner='root', group='root', mode='0644')]
    states = record({'/etc/slurm': dict(f(b''), state='directory', mode='0755'), '/etc/slurm/slurm.conf': f(b'A=1\n')})
    result = act.run(task_vars=states)
    assert result == dict(changed=False, changed_files=[], keys=[], restart=False, host_contacted=False)
    # configless: nothing written, the folder not asked for
    act = action(slurm_config.ActionModule, {'dir': '/etc/slurm', 'files': {'slurm.conf': None}})
    assert act.specs(act._task.args) == [dict(path='/etc/slurm/slurm.conf', state='absent')]
    # a name with a slash is the module's to refuse
    act = action(slurm_config.ActionModule, {'dir': '/etc/slurm', 'files': {'a/b': 'x'}})
    assert act.specs(act._task.args) is None


def test_munge_key_compares_the_hash_only():
    args = {'path': '/etc/munge/munge.key', 'key': base64.b64encode(KEY).decode(), 'owner': 'munge',
            'group': 'munge', 'mode': '0400'}
    act = action(munge_key.ActionModule, args)
    assert act.run(task_vars=record({'/etc/munge/munge.key': f(KEY, '0400', 'munge')}))['host_contacted'] is False
    act = action(munge_key.ActionModule, args)
    act.run(task_vars=record({'/etc/munge/munge.key': f(KEY + b'x', '0400', 'munge')}))
    act._execute_module.assert_called_once()
    # no key (make one where none is), or a bad one (the module says why): the module runs
    for bad in ({'path': '/etc/munge/munge.key'}, dict(args, key='not base64!')):
        act = action(munge_key.ActionModule, bad)
        assert act.specs(bad) is None
