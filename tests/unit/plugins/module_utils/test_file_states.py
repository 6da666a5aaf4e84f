from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import file_states


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def tree(tmp_path):
    (tmp_path / 'conf').mkdir(mode=0o755)
    (tmp_path / 'conf' / 'a.conf').write_text('a=1\n')
    os.chmod(str(tmp_path / 'conf' / 'a.conf'), 0o640)
    (tmp_path / 'conf' / '.hidden').write_text('x')
    os.symlink('a.conf', str(tmp_path / 'conf' / 'link'))
    return tmp_path


def test_read_lists_kind_mode_owner_and_hash(tree):
    states = file_states.read([str(tree / 'conf'), str(tree / 'conf' / '*'), str(tree / 'missing')])
    paths = states['paths']
    assert sorted(paths) == [str(tree / 'conf'), str(tree / 'conf' / 'a.conf'), str(tree / 'conf' / 'link')]
    a = paths[str(tree / 'conf' / 'a.conf')]
    assert a['state'] == 'file' and a['mode'] == '0640' and a['sha256'] == sha('a=1\n')
    assert a['uid'] == os.getuid() and a['owner']
    assert paths[str(tree / 'conf')]['state'] == 'directory'
    assert paths[str(tree / 'conf' / 'link')]['state'] == 'link'
    assert 'sha256' not in paths[str(tree / 'conf' / 'link')]


def test_large_file_is_not_hashed(tree, monkeypatch):
    monkeypatch.setattr(file_states, 'MAX_HASHED', 2)
    states = file_states.read([str(tree / 'conf' / 'a.conf')])
    assert 'sha256' not in states['paths'][str(tree / 'conf' / 'a.conf')]
    spec = dict(path=str(tree / 'conf' / 'a.conf'), content='a=1\n')
    assert not file_states.in_place(spec, states)


@pytest.mark.parametrize('path, pattern, expected', [
    ('/etc/slurm/slurm.conf', '/etc/slurm/*', True),
    ('/etc/slurm', '/etc/slurm/*', False),
    ('/etc/slurm/prolog.d/x', '/etc/slurm/*', False),  # * stops at /, as glob's
    ('/etc/slurm/.hidden', '/etc/slurm/*', False),  # glob skips names with a leading dot
    ('/etc/slurm/.hidden', '/etc/slurm/.*', True),
    ('/etc/systemd/system/slurmd.service.d', '/etc/systemd/system/slurm*.service.d', True),
])
def test_covered_follows_glob(path, pattern, expected):
    assert file_states.covered(path, [pattern]) is expected


def states_of(tree, *patterns):
    return file_states.read([str(tree / p) for p in patterns])


def test_in_place(tree):
    states = states_of(tree, 'conf', 'conf/*')
    conf = str(tree / 'conf' / 'a.conf')
    assert file_states.in_place(dict(path=conf, content='a=1\n', mode='0640'), states)
    assert file_states.in_place(dict(path=conf, content='a=1\n', mode='640', owner=str(os.getuid())), states)
    assert file_states.in_place(dict(path=conf, sha256=sha('a=1\n')), states)
    assert file_states.in_place(dict(path=str(tree / 'conf'), state='directory', mode='0755'), states)
    assert file_states.in_place(dict(path=str(tree / 'conf' / 'gone'), state='absent'), states)
    # not in place: content, mode, owner, kind, a link, a path no pattern covers
    assert not file_states.in_place(dict(path=conf, content='a=2\n'), states)
    assert not file_states.in_place(dict(path=conf, content='a=1\n', mode='0644'), states)
    assert not file_states.in_place(dict(path=conf, content='a=1\n', owner='no-such-user'), states)
    assert not file_states.in_place(dict(path=conf, state='directory'), states)
    assert not file_states.in_place(dict(path=conf, state='absent'), states)
    assert not file_states.in_place(dict(path=str(tree / 'conf' / 'link'), content='a=1\n'), states)
    assert not file_states.in_place(dict(path=str(tree / 'other'), state='absent'), states)
    # what it cannot tell: a symbolic mode, a purge, no content, a relative path
    assert not file_states.in_place(dict(path=conf, content='a=1\n', mode='u=rw,g=r'), states)
    assert not file_states.in_place(dict(path=str(tree / 'conf'), state='directory', purge=['*.conf']), states)
    assert not file_states.in_place(dict(path=conf), states)
    assert not file_states.in_place(dict(path='conf/a.conf', content='a=1\n'), states)


def test_all_in_place_needs_a_record_and_specs(tree):
    states = states_of(tree, 'conf/*')
    spec = dict(path=str(tree / 'conf' / 'a.conf'), content='a=1\n')
    assert file_states.all_in_place([spec], states)
    assert not file_states.all_in_place([spec, dict(path=str(tree / 'conf' / 'b'), content='')], states)
    assert not file_states.all_in_place([spec], None)
    assert not file_states.all_in_place([], states)
    assert not file_states.all_in_place('not a list', states)


def test_a_bang_pattern_leaves_out_what_it_matches(tree):
    patterns = [str(tree / 'conf' / '*'), '!' + str(tree / 'conf' / 'a.conf')]
    states = file_states.read(patterns)
    assert str(tree / 'conf' / 'a.conf') not in states['paths']
    assert not file_states.covered(str(tree / 'conf' / 'a.conf'), patterns)
    assert file_states.covered(str(tree / 'conf' / 'b.conf'), patterns)
    # left out, so its spec is never in place by the record: the module runs
    assert not file_states.in_place(dict(path=str(tree / 'conf' / 'a.conf'), content='a=1\n'), states)
