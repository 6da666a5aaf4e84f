"""The sacctmgr modules end to end: read, plan, apply and exit, against a
stand-in sacctmgr on PATH that answers from the 24.11 capture (reads, and the
writes captured) and logs every invocation; writes not captured succeed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

import pytest
from ansible_collections.gpuhpc.slurm.plugins.modules import (sacctmgr_account, sacctmgr_info, sacctmgr_org,
                                                              sacctmgr_qos, sacctmgr_user)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
CAPTURE = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'sacctmgr', '24.11.5.json')

FAKE = '''#!%s
import json, os, sys, time
args = sys.argv[1:]
with open(os.environ['FAKE_LOG'], 'a') as f:
    f.write(json.dumps(args) + '\\n')
time.sleep(float(os.environ.get('FAKE_SLEEP', '0')))
fail = os.environ.get('FAKE_FAIL')
if fail and args[0] == '-i' and any(fail in a for a in args):
    sys.stderr.write(" error: No parent account 'x' on cluster 'gpulab'\\n")
    sys.exit(1)
with open(os.environ['FAKE_CAPTURE']) as f:
    commands = json.load(f)['commands']
for c in commands:
    if c['args'] == args:
        sys.stdout.write(c['stdout'])
        sys.stderr.write(c['stderr'])
        sys.exit(c['rc'])
if args[0] == '-nP':
    sys.exit('no captured answer for %%r' %% args)
print(' Done')
''' % sys.executable

LAB_QOS = [dict(name='gpu1', description='one GPU per user', max_tres_per_user={'gres/gpu': 1}, max_wall='04:00:00')]
LAB_ACCOUNTS = [dict(name='research', description='research division', organization='lab'),
                dict(name='vision', parent='research', fairshare=60, grp_tres={'gres/gpu': 2}, qos=['normal', 'gpu1'],
                     default_qos='normal'),
                dict(name='nlp', parent='research', fairshare=40, grp_tres='gres/gpu=4', qos=['normal', 'gpu1'],
                     default_qos='normal')]
LAB_USERS = [dict(name='vic', default_account='vision'), dict(name='nora', default_account='nlp')]


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """Puts the stand-in sacctmgr first on PATH; .writes() and .calls() read its log."""
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    binary = bindir / 'sacctmgr'
    binary.write_text(FAKE)
    binary.chmod(0o755)
    log = tmp_path / 'log'
    monkeypatch.setenv('PATH', '%s%s%s' % (bindir, os.pathsep, os.environ.get('PATH', '')))
    monkeypatch.setenv('FAKE_LOG', str(log))
    monkeypatch.setenv('FAKE_CAPTURE', CAPTURE)

    class Fake(object):
        @staticmethod
        def calls():
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

        @classmethod
        def writes(cls):
            return [' '.join(args[1:]) for args in cls.calls() if args[0] == '-i']

    return Fake


def test_the_lab_chart_applied_is_six_reads_and_no_change(run_module, fake):
    result = run_module(sacctmgr_org.main, dict(cluster='gpulab', qos=LAB_QOS, accounts=LAB_ACCOUNTS, users=LAB_USERS))
    assert result['changed'] is False and result['commands'] == [] and result['changes'] == []
    assert result['sacctmgr_calls'] == 6 and len(fake.calls()) == 6
    assert 'diff' not in result


CHANGE = dict(qos=[dict(name='gpu1', state='absent'), dict(name='newq', priority=5)],
              accounts=[dict(name='nlp', state='absent'), dict(name='vision', fairshare=70, parent='research')],
              users=[dict(name='nora', state='absent'), dict(name='zed', default_account='vision')])
CHANGE_COMMANDS = ['add qos name=newq priority=5',
                   'modify account where name=vision cluster=gpulab set fairshare=70',
                   'add user name=zed cluster=gpulab account=vision defaultaccount=vision',
                   'delete user where name=nora cluster=gpulab',
                   'delete account where name=nlp cluster=gpulab',
                   'delete qos where name=gpu1']


def test_check_mode_plans_and_writes_nothing(run_module, fake):
    result = run_module(sacctmgr_org.main, CHANGE, check_mode=True)
    assert result['changed'] is True
    assert result['commands'] == CHANGE_COMMANDS
    assert fake.writes() == []
    assert result['diff']['before']['accounts'] == dict(nlp=result['diff']['before']['accounts']['nlp'],
                                                        vision=dict(fairshare=60))
    assert result['diff']['after']['users'] == dict(nora=dict(accounts=[]),
                                                    zed=dict(accounts=['vision'], default_account='vision'))
    assert [(c['kind'], c['name'], c['action']) for c in result['changes']] == [
        ('qos', 'newq', 'add'), ('qos', 'gpu1', 'delete'), ('account', 'vision', 'modify'),
        ('account', 'nlp', 'delete'), ('user', 'nora', 'delete'), ('user', 'zed', 'add')]


def test_a_real_run_writes_the_planned_commands_in_order(run_module, fake):
    result = run_module(sacctmgr_org.main, CHANGE)
    assert result['changed'] is True and result['commands'] == CHANGE_COMMANDS
    assert fake.writes() == CHANGE_COMMANDS
    assert result['sacctmgr_calls'] == 5 + len(CHANGE_COMMANDS)  # no TRES given: the TRES are not read


def test_a_write_that_fails_says_what_was_applied(run_module, fake, monkeypatch):
    monkeypatch.setenv('FAKE_FAIL', 'name=team')
    result = run_module(sacctmgr_org.main, dict(qos=[dict(name='q9')], accounts=[dict(name='team')]))
    assert result['failed'] is True and result['code'] == 'parent_missing'
    assert result['msg'] == ("sacctmgr add account name=team cluster=gpulab parent=root: error: No parent account "
                             "'x' on cluster 'gpulab' (fix: add the parent account first, or correct parent)")
    assert result['applied'] == ['add qos name=q9']
    assert result['not_applied'] == ['add account name=team cluster=gpulab parent=root']


def test_a_sacctmgr_that_hangs_fails_with_the_timeout(run_module, fake, monkeypatch):
    monkeypatch.setenv('FAKE_SLEEP', '5')
    result = run_module(sacctmgr_info.main, dict(timeout=1))
    assert result['failed'] is True and result['code'] == 'timeout'
    assert result['msg'] == ('sacctmgr -nP show cluster format=Cluster did not finish within 1 s '
                             '(fix: check that slurmdbd answers (sacctmgr ping), or raise timeout)')
    assert result['sacctmgr_calls'] == 1


def test_the_single_entity_modules(run_module, fake):
    qos = run_module(sacctmgr_qos.main, dict(name='gpu1', priority=3), check_mode=True)
    assert qos['commands'] == ['modify qos where name=gpu1 set priority=3'] and qos['cluster'] is None
    account = run_module(sacctmgr_account.main, dict(name='vision', parent='research', grp_tres={}), check_mode=True)
    assert account['commands'] == ['modify account where name=vision cluster=gpulab set grptres=gres/gpu=-1']
    user = run_module(sacctmgr_user.main, dict(name='Kenji.Sato', default_account='vision', preserve_case_user=False),
                      check_mode=True)
    assert user['commands'] == ['add user name=kenji.sato cluster=gpulab account=vision defaultaccount=vision']
    assert fake.writes() == []


def test_an_item_with_an_unknown_option_is_named(run_module, fake):
    result = run_module(sacctmgr_account.main, dict(accounts=[dict(name='a1', bogus=2)]))
    assert result['failed'] is True and result['msg'].startswith('accounts[0] (a1): bogus.')
    assert fake.calls() == []


def test_info_reads_everything_as_facts(run_module, fake):
    result = run_module(sacctmgr_info.main, dict())
    assert result['changed'] is False and result['cluster'] == 'gpulab' and result['sacctmgr_calls'] == 5
    assert result['accounts']['vision']['grp_tres'] == 'gres/gpu=2'
    assert result['users']['vic']['default_account'] == 'vision'
    assert result['qos']['gpu1']['max_wall'] == 240
