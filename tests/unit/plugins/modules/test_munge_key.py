from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import stat

import pytest
from ansible_collections.gpuhpc.slurm.plugins.modules import munge_key

KEY = bytes(range(256)) * 4
KEY_B64 = base64.b64encode(KEY).decode()


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / 'munge.key')


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def test_writes_the_given_key_byte_for_byte(run_module, path):
    result = run_module(munge_key.main, dict(path=path, key=KEY_B64, mode='0400'))
    assert result['changed'] is True
    assert read(path) == KEY
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o400
    assert result['size'] == 1024
    assert KEY_B64 not in str(result)


def test_second_run_is_unchanged(run_module, path):
    run_module(munge_key.main, dict(path=path, key=KEY_B64, mode='0400'))
    result = run_module(munge_key.main, dict(path=path, key=KEY_B64, mode='0400'))
    assert result['changed'] is False


def test_replaces_a_different_key(run_module, path):
    with open(path, 'wb') as f:
        f.write(b'x' * 64)
    result = run_module(munge_key.main, dict(path=path, key=KEY_B64))
    assert result['changed'] is True
    assert read(path) == KEY
    assert result['diff']['before'] != result['diff']['after']
    assert KEY_B64 not in str(result['diff'])


def test_check_mode_reports_and_writes_nothing(run_module, path):
    result = run_module(munge_key.main, dict(path=path, key=KEY_B64), check_mode=True)
    assert result['changed'] is True
    assert not os.path.exists(path)


def test_generates_a_key_when_absent_and_never_again(run_module, path):
    first = run_module(munge_key.main, dict(path=path, mode='0400'))
    assert first['changed'] is True and first['generated'] is True
    made = read(path)
    assert len(made) == 1024
    again = run_module(munge_key.main, dict(path=path, mode='0400'))
    assert again['changed'] is False and again['generated'] is False
    assert read(path) == made
    assert again['fingerprint'] == first['fingerprint']


def test_check_mode_does_not_generate(run_module, path):
    result = run_module(munge_key.main, dict(path=path), check_mode=True)
    assert result['changed'] is True
    assert result['size'] == 0
    assert not os.path.exists(path)


def test_refuses_a_short_key_and_writes_nothing(run_module, path):
    result = run_module(munge_key.main, dict(path=path, key='c2hvcnQ='))
    assert result['failed'] is True
    assert 'key is 5 bytes long' in result['msg']
    assert not os.path.exists(path)


def test_refuses_an_existing_short_key_file(run_module, path):
    with open(path, 'wb') as f:
        f.write(b'short')
    result = run_module(munge_key.main, dict(path=path))
    assert result['failed'] is True
    assert path in result['msg']
    assert read(path) == b'short'


def test_missing_directory_says_install_munge(run_module, tmp_path):
    result = run_module(munge_key.main, dict(path=str(tmp_path / 'nope' / 'munge.key'), key=KEY_B64))
    assert result['failed'] is True
    assert 'install munge first' in result['msg']


def test_check_mode_before_munge_is_installed_reports_a_change(run_module, tmp_path):
    path = str(tmp_path / 'nope' / 'munge.key')
    result = run_module(munge_key.main, dict(path=path, key=KEY_B64), check_mode=True)
    assert result['changed'] is True
    assert not os.path.exists(os.path.dirname(path))


def test_check_mode_still_refuses_a_bad_key(run_module, tmp_path):
    path = str(tmp_path / 'nope' / 'munge.key')
    result = run_module(munge_key.main, dict(path=path, key='c2hvcnQ='), check_mode=True)
    assert result['failed'] is True
