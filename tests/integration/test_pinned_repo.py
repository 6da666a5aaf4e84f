"""gpuhpc.slurm.pinned_repo, the package repository of grafana and
dcgm_exporter (and the package files that replace it), run for real against
the local host with its apt folders in a scratch root: a stand-in repository
served on loopback and a throwaway key (conftest.py), checked, configured once
(a rerun changes nothing); a wrong key, an unreachable repository, a package
file of another SHA-256 or kind are refused before anything is written;
--check on a new host writes nothing and says pending. Packages are not
installed here: a run with no packages configures the repository only."""
import contextlib
import hashlib
import http.server
import re
import socket

import pytest

from local_play import changed, inventory, play, served

PLAY = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.pinned_repo
    - ansible.builtin.debug:
        msg: "result changed={{ pinned_repo_result.changed | bool }} pending={{ pinned_repo_result.pending | bool }}"
'''

FOLDERS = dict(__pinned_repo_apt_sources_dir='sources.list.d', __pinned_repo_apt_keyrings_dir='keyrings',
               __pinned_repo_apt_preferences_dir='preferences.d', __pinned_repo_rpm_keys_dir='rpm-gpg',
               __pinned_repo_yum_repos_dir='yum.repos.d')


ASKED = []


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; notes the paths asked for in ASKED."""

    def log_message(self, *args):
        ASKED.append(self.path)


@contextlib.contextmanager
def served_noting(folder):
    """folder over HTTP on a free loopback port, the paths asked for noted in ASKED; yields the base URL."""
    del ASKED[:]
    with served(folder, Handler) as url:
        yield url


def written(host):
    """Every file under the scratch root, relative."""
    return sorted(str(p.relative_to(host)) for p in host.rglob('*') if p.is_file())


@pytest.fixture
def repo(tmp_path, test_key):
    """The stand-in repository (its index at dists/stable and, flat, at the
    top), the scratch root with empty apt folders, and the role's variables."""
    upstream = tmp_path / 'upstream'
    (upstream / 'dists' / 'stable').mkdir(parents=True)
    for index in (upstream / 'InRelease', upstream / 'dists' / 'stable' / 'InRelease'):
        index.write_text('stand-in\n')
    host = tmp_path / 'host'
    for folder in FOLDERS.values():
        (host / folder).mkdir(parents=True)
    spaced = ' '.join(re.findall('....', test_key['fingerprint'].lower()))
    return dict(upstream=upstream, host=host, cache=tmp_path / 'cache', key=test_key, vars=dict(
        {k: str(host / v) for k, v in FOLDERS.items()},
        pinned_repo_name='gpuhpc-demo', pinned_repo_title='demo package repository',
        pinned_repo_comment='The demo repository, for the test;\nsigned by the pinned key.',
        pinned_repo_apt_suite='stable', pinned_repo_apt_components=['main', 'extra'],
        pinned_repo_probe_advice='demo 1.0 cannot be installed from it. Point demo_repo_url at a mirror',
        pinned_repo_key_url='file://' + test_key['path'], pinned_repo_key_fingerprint=spaced,
        pinned_repo_apt_pins_comment='gpuhpc.slurm test.',
        pinned_repo_apt_pins=[
            dict(comment='Hold demo at 1.0.', package='demo', pin='version 1.0', priority=1001),
            dict(package='left-out', pin='version 2', priority=1001, enabled=False),
            dict(package='demo-doc', pin='origin "127.0.0.1"', priority=100)],
        pinned_repo_cache_dir=str(tmp_path / 'cache'), pinned_repo_vars='demo'))


def run(tmp_path, extra_vars, check=False):
    """rc, the output on one line, the raw output."""
    work = tmp_path / ('work-%d' % len(list(tmp_path.glob('work-*'))))
    work.mkdir()
    return play(work, PLAY, inventory(dict(monitoring=dict(monitor=None))), extra_vars, check)


PREFERENCES = '''# Ansible managed
# gpuhpc.slurm test.
# Hold demo at 1.0.
Package: demo
Pin: version 1.0
Pin-Priority: 1001

Package: demo-doc
Pin: origin "127.0.0.1"
Pin-Priority: 100
'''


def test_a_repository_with_its_pinned_key_is_configured_once(tmp_path, repo):
    with served_noting(repo['upstream']) as url:
        extra = dict(repo['vars'], pinned_repo_url=url)
        rc, out, raw = run(tmp_path, extra)
        assert rc == 0, raw
        assert 'result changed=False pending=False' in out
        assert ASKED == ['/dists/stable/InRelease']
        host = repo['host']
        assert written(host) == ['keyrings/gpuhpc-demo.asc', 'preferences.d/gpuhpc-demo',
                                 'sources.list.d/gpuhpc-demo.sources']
        assert (host / 'keyrings' / 'gpuhpc-demo.asc').read_text() == open(repo['key']['path']).read()
        assert (host / 'sources.list.d' / 'gpuhpc-demo.sources').read_text() == (
            '# Ansible managed\n# The demo repository, for the test;\n# signed by the pinned key.\n'
            f'Types: deb\nURIs: {url}\nSuites: stable\nComponents: main extra\n'
            f'Signed-By: {host}/keyrings/gpuhpc-demo.asc\n')
        assert (host / 'preferences.d' / 'gpuhpc-demo').read_text() == PREFERENCES
        assert (repo['cache'] / 'gnupg').stat().st_mode & 0o777 == 0o700
        rc, out, raw = run(tmp_path, extra)
        assert rc == 0, raw
        assert changed(raw) == 0, raw
        rc, out, raw = run(tmp_path, extra, check=True)
        assert rc == 0, raw
        assert changed(raw) == 0, raw
        assert 'result changed=False pending=False' in out


def test_a_flat_repository_has_no_components(tmp_path, repo):
    with served_noting(repo['upstream']) as url:
        rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url=url + '/', pinned_repo_apt_suite='/',
                                          pinned_repo_apt_components=[], pinned_repo_apt_pins=[]))
    assert rc == 0, raw
    assert ASKED == ['/InRelease']  # the index of a flat repository
    sources = (repo['host'] / 'sources.list.d' / 'gpuhpc-demo.sources').read_text()
    assert f'URIs: {url}/\nSuites: /\nSigned-By: ' in sources, sources
    assert not (repo['host'] / 'preferences.d' / 'gpuhpc-demo').exists()


def test_a_key_that_is_not_the_pinned_one_is_refused(tmp_path, repo):
    pinned = 'EB693B3035CD5710E231E123A4B469963BF863CC'
    with served_noting(repo['upstream']) as url:
        rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url=url, pinned_repo_key_fingerprint=pinned))
    assert rc != 0
    assert (f"monitor: the signing key at file://{repo['key']['path']} is not the pinned key (fingerprint {pinned}; "
            f"found {repo['key']['fingerprint']}), so the repository was not configured. For a mirror that re-signs "
            'the repository set demo_repo_key_url and demo_repo_key_fingerprint.') in out, raw
    assert written(repo['host']) == []


@pytest.mark.parametrize('matches', [True, False], ids=['same', 'other'])
def test_the_sha256_pin_ignores_version_lines(tmp_path, repo, matches):
    """The other pin (NVIDIA's RPM key): the SHA-256 of the key file without its
    Version: lines, which the throwaway key has."""
    pin = repo['key']['sha256'] if matches else '0' * 64
    with served_noting(repo['upstream']) as url:
        rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url=url, pinned_repo_key_fingerprint='',
                                          pinned_repo_key_sha256=pin.upper(), pinned_repo_key_advice='Ask the vendor.'))
    if matches:
        assert rc == 0, raw
        assert (repo['host'] / 'keyrings' / 'gpuhpc-demo.asc').is_file()
    else:
        assert rc != 0
        assert (f"(SHA-256 {pin} without Version: lines; found {repo['key']['sha256']}), so the repository was not "
                'configured. Ask the vendor.') in out, raw
        assert written(repo['host']) == []


def test_an_unreachable_repository_stops_before_anything_changes(tmp_path, repo):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url=f'http://127.0.0.1:{port}/demo'))
    assert rc != 0
    assert (f'monitor: the demo package repository http://127.0.0.1:{port}/demo cannot be reached from this host (') \
        in out, raw
    assert '), so demo 1.0 cannot be installed from it. Point demo_repo_url at a mirror' in out, raw
    assert not repo['cache'].exists()
    assert written(repo['host']) == []


def test_check_mode_on_a_new_host_writes_nothing(tmp_path, repo):
    with served_noting(repo['upstream']) as url:
        rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url=url,
                                          pinned_repo_packages=[dict(name='demo', version='1.0')]), check=True)
    assert rc == 0, raw
    assert 'result changed=False pending=True' in out
    assert f'+URIs: {url}' in raw and '+Components: main extra' in raw and '+Pin: version 1.0' in raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : Debian \| install from the repository\] \*+\nskipping', raw), raw
    assert not repo['cache'].exists()
    assert written(repo['host']) == []


@pytest.fixture
def package(tmp_path):
    path = tmp_path / 'demo_1.0_all.deb'
    path.write_bytes(b'a stand-in for a package\n')
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize('case', ['other-sha256', 'missing', 'rpm'])
def test_a_package_file_that_is_not_the_pinned_one_is_refused(tmp_path, repo, package, case):
    path, sha = package
    src = {'other-sha256': str(path), 'missing': str(tmp_path / 'gone' / path.name),
           'rpm': str(path.with_suffix('.rpm'))}[case]
    if case == 'rpm':
        path.rename(src)
    given = 'c' * 64 if case == 'other-sha256' else sha
    rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_package_files=[dict(src=src, sha256=given)]))
    assert rc != 0
    assert {'other-sha256': f'monitor: demo_package_files entry {src} has SHA-256 {sha}, not {given} as given: '
                            'nothing was copied',
            'missing': f'monitor: demo_package_files entry {src} does not exist on the controller: nothing was copied',
            'rpm': f'monitor: demo_package_files entry {src} is an .rpm file, but this host installs .deb packages',
            }[case] in out, raw
    assert not repo['cache'].exists()
    assert written(repo['host']) == []


def test_package_files_in_check_mode_on_a_new_host(tmp_path, repo, package):
    """No repository, no key: the file would be copied and installed; the
    preferences hold it; nothing is written."""
    path, sha = package
    rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url='', pinned_repo_key_url='',
                                      pinned_repo_package_file_label='demo_package_file',
                                      pinned_repo_package_files=[dict(src=str(path), sha256=sha.upper())]), check=True)
    assert rc == 0, raw
    assert 'result changed=False pending=True' in out
    assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : Files \| copy the checked files\] \*+\n(.*\n)*?changed:', raw)
    assert '+Pin: version 1.0' in raw
    for task in ('Key \\| cache folder for what is checked before it is trusted', 'Debian \\| the repository'):
        assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : ' + task + r'\] \*+\nskipping', raw), task
    assert not repo['cache'].exists()
    assert written(repo['host']) == []


def test_incomplete_input_names_the_variables(tmp_path, repo):
    rc, out, raw = run(tmp_path, dict(repo['vars'], pinned_repo_url='http://127.0.0.1:9/demo',
                                      pinned_repo_key_fingerprint='963FA27710458545'))
    assert rc != 0
    assert ("demo: give the repository a name ('gpuhpc-demo'), and either its URL, its key's URL and the key's pin "
            '(a fingerprint of 40 hex digits, or a SHA-256), or package files each with its SHA-256') in out, raw
    assert written(repo['host']) == []
