"""gpuhpc.slurm.pinned_archive, the release archive of node_exporter's and
Prometheus' release mode and of an upstream Slurm exporter, run for real
against the local host: an archive made here, served on loopback or given as
a file on the controller, fetched, checked, kept and unpacked; a rerun
changes nothing; a wrong file is refused before anything is written."""
import hashlib
import io
import tarfile

import pytest

from local_play import changed, inventory, play, served

PLAY = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.pinned_archive
    - ansible.builtin.debug:
        msg: "result fetched={{ pinned_archive_result.fetched | bool }} pending={{ pinned_archive_result.pending | bool }}"
'''


def tarball(path):
    """demo-1.0.linux-amd64.tar.gz with one top folder, as upstream releases have; its SHA-256."""
    with tarfile.open(path, 'w:gz') as tar:
        for name, body in (('demo', b'#!/bin/sh\necho demo 1.0\n'), ('LICENSE', b'Apache-2.0\n')):
            info = tarfile.TarInfo('demo-1.0.linux-amd64/' + name)
            info.size, info.mode = len(body), 0o755 if name == 'demo' else 0o644
            tar.addfile(info, io.BytesIO(body))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def release(tmp_path):
    upstream = tmp_path / 'upstream'
    upstream.mkdir()
    archive = upstream / 'demo-1.0.linux-amd64.tar.gz'
    host = tmp_path / 'host'
    return dict(archive=archive, sha256=tarball(archive), host=host, vars=dict(
        pinned_archive_dest=str(host / 'opt' / 'demo-1.0.linux-amd64.tar.gz'),
        pinned_archive_unpack_dir=str(host / 'opt' / 'demo-1.0.linux-amd64'),
        pinned_archive_creates='demo', pinned_archive_vars='demo_release'))


def run(tmp_path, extra_vars, check=False, raw=False):
    """rc and the output on one line; with raw, the raw output too."""
    work = tmp_path / ('work-%d' % len(list(tmp_path.glob('work-*'))))
    work.mkdir()
    result = play(work, PLAY, inventory(dict(monitoring=dict(monitor=None))), extra_vars, check)
    return result if raw else result[:2]


def test_a_url_is_fetched_checked_kept_and_unpacked_once(tmp_path, release):
    with served(release['archive'].parent) as base:
        extra = dict(release['vars'], pinned_archive_url=base + '/' + release['archive'].name,
                     pinned_archive_sha256=release['sha256'].upper())
        rc, out, raw = run(tmp_path, extra, raw=True)
        assert rc == 0, out
        assert 'result fetched=True pending=False' in out
    unpacked = release['host'] / 'opt' / 'demo-1.0.linux-amd64'
    assert sorted(p.name for p in unpacked.iterdir()) == ['LICENSE', 'demo']
    assert (unpacked / 'demo').stat().st_mode & 0o777 == 0o755
    assert changed(raw) == 3  # the two folders, the download, the unpacking: 1 task for both folders
    # again, with upstream gone: the kept archive is the pinned one, nothing is fetched
    rc, out, raw = run(tmp_path, extra, raw=True)
    assert rc == 0, out
    assert 'result fetched=False pending=False' in out
    assert changed(raw) == 0, out


def test_a_controller_file_is_checked_copied_and_unpacked(tmp_path, release):
    extra = dict(release['vars'], pinned_archive_file=str(release['archive']), pinned_archive_sha256=release['sha256'])
    rc, out, raw = run(tmp_path, extra, raw=True)
    assert rc == 0, out
    assert 'result fetched=True pending=False' in out
    assert (release['host'] / 'opt' / 'demo-1.0.linux-amd64' / 'demo').is_file()
    rc, out, raw = run(tmp_path, extra, raw=True)
    assert rc == 0, out
    assert changed(raw) == 0, out


@pytest.mark.parametrize('missing', [False, True])
def test_a_wrong_or_missing_controller_file_writes_nothing(tmp_path, release, missing):
    wrong = 'b' * 64
    given = str(release['archive']) + ('.gone' if missing else '')
    rc, out = run(tmp_path, dict(release['vars'], pinned_archive_file=given, pinned_archive_sha256=wrong))
    assert rc != 0
    if missing:
        assert f'demo_release_file {given} does not exist on the Ansible controller' in out, out
    else:
        assert (f"demo_release_file {given} has SHA-256 {release['sha256']}, but demo_release_sha256 says {wrong} "
                'for demo-1.0.linux-amd64.tar.gz') in out, out
    assert not release['host'].exists()


def test_only_the_members_asked_for_without_stripping(tmp_path, release):
    extra = dict(release['vars'], pinned_archive_file=str(release['archive']), pinned_archive_sha256=release['sha256'],
                 pinned_archive_members=['demo-1.0.linux-amd64/demo'], pinned_archive_strip_components=0,
                 pinned_archive_creates='demo-1.0.linux-amd64/demo')
    rc, out = run(tmp_path, extra)
    assert rc == 0, out
    unpacked = release['host'] / 'opt' / 'demo-1.0.linux-amd64'
    assert [str(p.relative_to(unpacked)) for p in sorted(unpacked.rglob('*'))] == [
        'demo-1.0.linux-amd64', 'demo-1.0.linux-amd64/demo']


def test_check_mode_on_a_new_host_writes_nothing(tmp_path, release):
    extra = dict(release['vars'], pinned_archive_file=str(release['archive']), pinned_archive_sha256=release['sha256'])
    rc, out = run(tmp_path, extra, check=True)
    assert rc == 0, out
    assert 'result fetched=True pending=True' in out
    assert not release['host'].exists()


def test_incomplete_input_names_the_variables(tmp_path, release):
    rc, out = run(tmp_path, dict(release['vars'], pinned_archive_url='http://127.0.0.1:9/x.tar.gz',
                                 pinned_archive_sha256='abc'))
    assert rc != 0
    assert ("demo_release: give the archive's SHA-256 (64 hex digits; now 'abc'), a URL or a file on the controller, "
            'and absolute paths for the archive and its folder') in out, out
    assert not release['host'].exists()
