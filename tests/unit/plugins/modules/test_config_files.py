from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.gpuhpc.slurm.plugins.modules import config_files


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def specs(root, text='a = 1\n'):
    return [
        dict(path=str(root / 'etc'), state='directory', mode='0755'),
        dict(path=str(root / 'etc' / 'a.conf'), content=text, mode='0644'),
        dict(path=str(root / 'etc' / 'old.conf'), state='absent'),
    ]


def test_writes_then_a_rerun_changes_nothing(run_module, tmp_path):
    result = run_module(config_files.main, dict(files=specs(tmp_path)))
    assert result['changed'] is True
    assert result['changed_paths'] == [str(tmp_path / 'etc'), str(tmp_path / 'etc' / 'a.conf')]
    assert (tmp_path / 'etc' / 'a.conf').read_text() == 'a = 1\n'
    assert mode(str(tmp_path / 'etc' / 'a.conf')) == 0o644
    again = run_module(config_files.main, dict(files=specs(tmp_path)))
    assert again['changed'] is False
    assert again['changed_paths'] == []
    assert again['diff'] == []


def test_reports_only_the_file_that_changed_with_its_diff(run_module, tmp_path):
    run_module(config_files.main, dict(files=specs(tmp_path)))
    result = run_module(config_files.main, dict(files=specs(tmp_path, 'a = 2\n')))
    assert result['changed_paths'] == [str(tmp_path / 'etc' / 'a.conf')]
    assert dict(before='a = 1\n', after='a = 2\n') == {k: result['diff'][0][k] for k in ('before', 'after')}


def test_mode_drift_is_put_back(run_module, tmp_path):
    run_module(config_files.main, dict(files=specs(tmp_path)))
    os.chmod(str(tmp_path / 'etc' / 'a.conf'), 0o600)
    result = run_module(config_files.main, dict(files=specs(tmp_path)))
    assert result['changed_paths'] == [str(tmp_path / 'etc' / 'a.conf')]
    assert mode(str(tmp_path / 'etc' / 'a.conf')) == 0o644


def test_removes_what_must_be_absent(run_module, tmp_path):
    run_module(config_files.main, dict(files=specs(tmp_path)))
    (tmp_path / 'etc' / 'old.conf').write_text('x')
    result = run_module(config_files.main, dict(files=specs(tmp_path)))
    assert result['changed_paths'] == [str(tmp_path / 'etc' / 'old.conf')]
    assert not (tmp_path / 'etc' / 'old.conf').exists()


def test_check_mode_says_what_would_change_and_touches_nothing(run_module, tmp_path):
    result = run_module(config_files.main, dict(files=specs(tmp_path)), check_mode=True)
    assert result['changed'] is True
    assert str(tmp_path / 'etc' / 'a.conf') in result['changed_paths']
    assert not (tmp_path / 'etc').exists()
    run_module(config_files.main, dict(files=specs(tmp_path)))
    result = run_module(config_files.main, dict(files=specs(tmp_path, 'a = 3\n')), check_mode=True)
    assert result['changed_paths'] == [str(tmp_path / 'etc' / 'a.conf')]
    assert (tmp_path / 'etc' / 'a.conf').read_text() == 'a = 1\n'


def test_a_file_needs_content_and_a_folder(run_module, tmp_path):
    result = run_module(config_files.main, dict(files=[dict(path=str(tmp_path / 'x'))]))
    assert result['failed'] and 'no content' in result['msg']
    result = run_module(config_files.main, dict(files=[dict(path=str(tmp_path / 'no' / 'x'), content='')]))
    assert result['failed'] and 'folder of' in result['msg']


def test_a_folder_in_place_of_a_file_is_an_error(run_module, tmp_path):
    (tmp_path / 'd').mkdir()
    result = run_module(config_files.main, dict(files=[dict(path=str(tmp_path / 'd'), content='')]))
    assert result['failed'] and 'not a file' in result['msg']


def test_a_folder_gets_its_missing_parents(run_module, tmp_path):
    deep = tmp_path / 'var' / 'lib' / 'grafana' / 'dashboards'
    result = run_module(config_files.main, dict(files=[dict(path=str(deep), state='directory', mode='0750')]))
    assert result['changed_paths'] == [str(deep)]
    assert mode(str(deep)) == 0o750


def test_validate_checks_the_new_content_before_it_replaces_the_file(run_module, tmp_path):
    conf = tmp_path / 'a.conf'
    conf.write_text('good\n')
    check = "grep -q good %s"
    result = run_module(config_files.main, dict(files=[dict(path=str(conf), content='bad\n', validate=check)]))
    assert result['failed'] is True
    assert result['msg'].startswith('%s was not changed: grep -q good %s failed (rc 1)' % (conf, conf))
    assert conf.read_text() == 'good\n'
    assert sorted(os.listdir(str(tmp_path))) == ['a.conf']
    result = run_module(config_files.main, dict(files=[dict(path=str(conf), content='still good\n', validate=check)]))
    assert result['changed'] is True
    assert conf.read_text() == 'still good\n'


def test_validate_needs_a_placeholder(run_module, tmp_path):
    result = run_module(config_files.main, dict(files=[dict(path=str(tmp_path / 'a'), content='x', validate='true')]))
    assert result['failed'] is True
    assert "validate 'true' has no %s" in result['msg']


def test_purge_removes_the_unlisted_files_that_match(run_module, tmp_path):
    rules = tmp_path / 'rules'
    rules.mkdir()
    for name in ('old.yml', 'keep.yml', 'notes.txt'):
        (rules / name).write_text('x\n')
    (rules / 'sub.yml').mkdir()
    files = [dict(path=str(rules), state='directory', purge=['*.yml', '*.yaml']),
             dict(path=str(rules / 'keep.yml'), content='x\n')]
    check = run_module(config_files.main, dict(files=files), check_mode=True)
    assert check['changed_paths'] == [str(rules / 'old.yml')]
    assert (rules / 'old.yml').exists()
    result = run_module(config_files.main, dict(files=files))
    assert result['changed_paths'] == [str(rules / 'old.yml')]
    assert sorted(os.listdir(str(rules))) == ['keep.yml', 'notes.txt', 'sub.yml']
    assert run_module(config_files.main, dict(files=files))['changed'] is False
