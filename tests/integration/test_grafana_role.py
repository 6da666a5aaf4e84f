"""The grafana role on a machine that cannot reach Grafana's repository.

The Grafana server never runs here: apt.grafana.com is unreachable from
these machines and from the lab (tests/integration/conftest.py says so in the
test summary). What runs, with ansible-playbook against local hosts:
preflight's refusals (admin password, dashboards, paths, grafana_ini_extra,
the package file's checksum), the stop of an unreachable repository before
anything changes, grafana_install: none writing grafana.ini, the
provisioning and the dashboards into a scratch root (read back; idempotent;
--check), the old boolean grafana_install, the check of the repository key
against its pin (roles/pinned_repo; a real run that stops at a wrong key,
a --check run that accepts the pinned one), the install path in --check
against a stand-in repository served on loopback (nothing written), where the
health check asks, and every dashboard query parsed by promtool."""
import contextlib
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading

import pytest
import yaml

from local_play import ROOT, inventory, play, snapshot

sys.path.insert(0, os.path.join(ROOT, 'tests'))
import dashboard_queries  # noqa: E402  pylint: disable=wrong-import-position
ROLE = os.path.join(ROOT, 'roles', 'grafana')
DASHBOARDS = os.path.join(ROLE, 'files', 'dashboards')
PASSWORD = 'Gr4fana#test;pw'

# Everything the install path writes on the host outside the configuration;
# a run that stops early must not have touched any of it.
WRITTEN = ['/etc/apt/sources.list.d/gpuhpc-grafana.sources', '/etc/apt/preferences.d/gpuhpc-grafana',
           '/etc/apt/keyrings/gpuhpc-grafana.asc', '/etc/yum.repos.d/gpuhpc-grafana.repo',
           '/etc/pki/rpm-gpg/RPM-GPG-KEY-gpuhpc-grafana', '/var/cache/gpuhpc-grafana', '/etc/grafana',
           '/var/lib/grafana']


def run(tmp_path, playbook, extra_vars=None, check=False, verbosity=0):
    """Run a playbook against the local host 'monitor'; return rc, the output
    on one line (quotes as written) and the raw output."""
    return play(tmp_path, playbook, inventory(dict(monitoring=dict(monitor=None))), extra_vars, check, verbosity)


PREFLIGHT = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.grafana
        tasks_from: preflight
'''

ROLE_PLAY = '''
- hosts: all
  gather_facts: false
  roles:
    - gpuhpc.slurm.grafana
'''


def good(**extra):
    return dict(dict(grafana_admin_password=PASSWORD), **extra)


# --- preflight ------------------------------------------------------------------

def test_good_input_passes(tmp_path):
    rc, out, raw = run(tmp_path, PREFLIGHT, good(), verbosity=2)
    assert rc == 0, raw
    assert PASSWORD not in raw


@pytest.mark.parametrize('extra, message', [
    ({}, 'grafana_admin_password is empty: set the Grafana admin password (vault it); the role has no default for it'),
    (dict(grafana_admin_password='admin'),
     "grafana_admin_password is 'admin', Grafana's well-known default password: choose another one (vault it)"),
    (dict(grafana_admin_password='Admin'),
     "grafana_admin_password is 'admin', Grafana's well-known default password: choose another one (vault it)"),
    (good(grafana_listen_address='0.0.0.0:3000'),
     "grafana_listen_address '0.0.0.0:3000' is not an address of the host (an IPv4 or IPv6 address without brackets, "
     "or a host name; 0.0.0.0 or :: for all)"),
    (good(grafana_port=70000), 'grafana_port 70000 is not a TCP port (1 to 65535)'),
    (good(grafana_tls_cert_file='/etc/ssl/grafana.pem'),
     'grafana_tls_cert_file and grafana_tls_key_file go together: give both or neither'),
    (good(grafana_prometheus_url='localhost:9090'),
     "grafana_prometheus_url 'localhost:9090' is not an http:// or https:// URL"),
    (good(grafana_version='v13'), "grafana_version 'v13' is not a Grafana package version such as 13.2.3"),
    (good(grafana_repo_key_fingerprint='963FA27710458545'),
     "grafana_repo_key_fingerprint '963FA27710458545' is not an OpenPGP fingerprint (40 hex digits, spaces allowed)"),
    (good(grafana_package_file='/srv/grafana_13.2.3_amd64.deb'),
     'grafana_package_file needs grafana_package_sha256, the SHA-256 (64 hex digits) of the package file: '
     'the role installs nothing it has not checked'),
    (good(grafana_package_file='grafana_13.2.3_amd64.deb', grafana_package_sha256='0' * 64),
     "grafana_package_file 'grafana_13.2.3_amd64.deb' is not an absolute path on the Ansible controller"),
    (good(grafana_ini_extra=dict(security=dict(admin_password='x'), server=dict(http_port=1))),
     'grafana_ini_extra: [security] admin_password is set by the role from its grafana_* variables: use those; '
     '[server] http_port is set by the role from its grafana_* variables: use those'),
    (good(grafana_ini_extra=dict(smtp=dict(host='a\nb'), database='sqlite3')),
     'grafana_ini_extra: [smtp] host holds a line break or three double quotes in a row; '
     '[database] is not a mapping of key: value'),
], ids=['no-password', 'admin', 'Admin', 'listen-port', 'port', 'tls-half', 'prometheus-url', 'version',
        'short-fingerprint', 'file-no-sha', 'file-relative', 'ini-managed', 'ini-bad'])
def test_bad_input_is_refused_naming_the_variable(tmp_path, extra, message):
    rc, out, raw = run(tmp_path, PREFLIGHT, extra, verbosity=2)
    assert rc != 0
    assert message in out, raw
    if extra.get('grafana_admin_password') == PASSWORD:
        assert PASSWORD not in raw


def test_a_password_grafana_ini_cannot_carry_is_refused_and_not_shown(tmp_path):
    secret = 'abc"""def-secret'
    rc, out, raw = run(tmp_path, PREFLIGHT, dict(grafana_admin_password=secret), verbosity=3)
    assert rc != 0
    assert ('grafana_admin_password holds a line break or three double quotes in a row, which grafana.ini cannot '
            'carry: choose another one') in out, raw
    assert 'def-secret' not in raw


def write(path, text):
    path.write_text(text)
    return str(path)


def test_a_dashboard_that_is_not_json_is_named(tmp_path):
    good_file = write(tmp_path / 'fine.json', json.dumps(dict(uid='site-fine', title='Fine')))
    broken = write(tmp_path / 'broken.json', '{"uid": "site-broken",\n "title": "Broken",\n}\n')
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_dashboards_extra=[good_file, broken]))
    assert rc != 0
    assert (f'grafana_dashboards_extra[1] {broken} is not valid JSON (Expecting property name enclosed in double '
            'quotes: line 3 column 1 (char 43)): fix the file, or take it out of grafana_dashboards_extra') in out, raw
    assert 'fine.json is not valid' not in out


def test_dashboards_grafana_cannot_provision_are_named(tmp_path):
    clash = write(tmp_path / 'gpuhpc-nodes.json', json.dumps(dict(uid='gpuhpc-gpus', title='Mine')))
    listed = write(tmp_path / 'list.json', '[1, 2]')
    shared = write(tmp_path / 'shared.json', json.dumps(dict(uid='site-shared', title='Shared', panels=[
        dict(datasource=dict(uid='${DS_PROMETHEUS}'))])))
    no_uid = write(tmp_path / 'nouid.json', json.dumps(dict(title='No uid')))
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_dashboards_extra=[clash, listed, shared, no_uid]))
    assert rc != 0
    for message in (
            f"grafana_dashboards_extra[0] {clash} has uid 'gpuhpc-gpus', as the role's dashboard "
            "files/dashboards/gpuhpc-gpus.json does: Grafana would keep only one of them",
            f"grafana_dashboards_extra[0] {clash} has the file name of the role's dashboard "
            "files/dashboards/gpuhpc-nodes.json: both go into /var/lib/grafana/dashboards/gpuhpc, so rename one",
            f'grafana_dashboards_extra[1] {listed} is JSON but not a dashboard (an object with uid and title)',
            f'grafana_dashboards_extra[2] {shared} was exported for sharing externally (${{DS_...}} inputs), which '
            'file provisioning does not fill in',
            f'grafana_dashboards_extra[3] {no_uid} has no uid, or one that is not 1 to 40 letters, digits, - or _'):
        assert message in out, raw


@pytest.mark.parametrize('entry, why', [
    ('relative.json', 'is not an absolute path'),
    ('/nonexistent/gpuhpc/x.json', 'is not a file on the Ansible controller'),
    ('/etc/hostname', 'is not a path ending in .json'),
])
def test_dashboards_extra_must_be_json_files_on_the_controller(tmp_path, entry, why):
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_dashboards_extra=[entry]))
    assert rc != 0
    assert f"grafana_dashboards_extra[0] '{entry}' {why}" in out, raw


def test_a_package_file_with_another_checksum_is_refused(tmp_path):
    package = tmp_path / 'grafana_13.2.3_amd64.deb'
    package.write_bytes(b'not really a package\n')
    real = hashlib.sha256(package.read_bytes()).hexdigest()
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_package_file=str(package), grafana_package_sha256='A' * 64))
    assert rc != 0
    assert f'grafana_package_file {package} has SHA-256 {real}, but grafana_package_sha256 says {"a" * 64}' in out, raw
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_package_file=str(package), grafana_package_sha256=real))
    assert rc == 0, raw


def test_the_role_checks_its_own_dashboards(tmp_path):
    """A broken file among the role's dashboards is named too: run from a
    copy of the role with one file broken."""
    copy = tmp_path / 'roles' / 'grafana'
    shutil.copytree(ROLE, copy)
    (copy / 'files' / 'dashboards' / 'gpuhpc-slurm.json').write_text('{"uid": "gpuhpc-slurm"')
    rc, out, raw = run(tmp_path, PREFLIGHT.replace('gpuhpc.slurm.grafana', str(copy)), good())
    assert rc != 0
    assert "the role's dashboard files/dashboards/gpuhpc-slurm.json is not valid JSON (" in out, raw


# --- an unreachable repository -----------------------------------------------------

def closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_an_unreachable_mirror_stops_the_role_before_anything_changes(tmp_path):
    port = closed_port()
    before = snapshot(WRITTEN)
    rc, out, raw = run(tmp_path, ROLE_PLAY, good(grafana_repo_url=f'http://127.0.0.1:{port}/grafana'), verbosity=2)
    assert rc != 0
    assert (f"monitor: the Grafana package repository http://127.0.0.1:{port}/grafana cannot be reached from this "
            'host (') in out, raw
    assert ('so Grafana 13.2.3 cannot be installed from it. Point grafana_repo_url at a mirror of it; or set '
            'grafana_package_file (with grafana_package_sha256) to the Grafana package on the Ansible controller; '
            'or set grafana_install: none') in out, raw
    assert snapshot(WRITTEN) == before
    assert PASSWORD not in raw
    assert re.search(r'monitor +: ok=\d+ +changed=0 ', raw), raw


def grafana_repo_reachable():
    for host in ('apt.grafana.com', 'rpm.grafana.com'):
        try:
            with socket.create_connection((host, 443), timeout=5):
                return True
        except OSError:
            pass
    return False


def test_grafanas_repository_is_unreachable_here_and_the_role_says_what_to_do(tmp_path):
    """The role's real default, on this machine (which cannot reach it); where
    Grafana's repository does answer, a mirror nobody listens on stands in."""
    reachable = grafana_repo_reachable()
    before = snapshot(WRITTEN)
    rc, out, raw = run(tmp_path, ROLE_PLAY, good(grafana_repo_url='http://127.0.0.1:9/grafana') if reachable else good())
    assert rc != 0
    assert re.search(r"monitor: the Grafana package repository (https://(apt|rpm)\.grafana\.com|http://127\.0\.0\.1:9/grafana) "
                     r"cannot be reached "
                     r"from this host \(.+\), so Grafana 13\.2\.3 cannot be installed from it\. Point "
                     r"grafana_repo_url at a mirror", out), raw
    assert 'set grafana_install: none to configure a Grafana installed otherwise' in out
    assert snapshot(WRITTEN) == before


# --- grafana_install: none, nothing installed: the files only -----------------------

def render(tmp_path, check=False, verbosity=2, **extra):
    root = tmp_path / 'root'
    extra = good(**dict(dict(grafana_install='none', __grafana_root=str(root)), **extra))
    rc, out, raw = run(tmp_path, ROLE_PLAY, extra, check=check, verbosity=verbosity)
    return rc, out, raw, root


def read_ini(path):
    """grafana.ini as section -> key -> value (the value as written)."""
    sections, current = {}, None
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith(('#', ';')):
            continue
        m = re.match(r'^\[(.+)\]$', line)
        if m:
            current = sections.setdefault(m.group(1), {})
            continue
        key, value = line.split('=', 1)
        current[key.strip()] = value.strip()
    return sections


NOT_INSTALLED = ('monitor: Grafana is not installed and grafana_install is none: wrote its configuration, '
                 'provisioning and dashboards only; the Grafana server was not installed or started')


def test_install_false_without_grafana_writes_the_files_only(tmp_path):
    extra_dashboard = write(tmp_path / 'site-gpfs.json', json.dumps(dict(uid='site-gpfs', title='GPFS')))
    rc, out, raw, root = render(tmp_path, grafana_dashboards_extra=[extra_dashboard],
                                grafana_ini_extra=dict(smtp=dict(enabled=True, host='mail.example:25')))
    assert rc == 0, raw
    assert out.count(NOT_INSTALLED) == 1, raw
    assert PASSWORD not in raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.grafana : Service \| enable and start grafana-server\] \*+\n(task path: .*\n)?skipping',
                     raw), raw

    ini_path = root / 'etc' / 'grafana' / 'grafana.ini'
    mode = stat.S_IMODE(ini_path.stat().st_mode)
    assert mode == 0o640, oct(mode)
    assert ini_path.stat().st_uid == 0
    ini = read_ini(ini_path)
    assert ini['security']['admin_password'] == f'"""{PASSWORD}"""'
    assert ini['security']['admin_user'] == 'admin'
    assert ini['security']['disable_gravatar'] == 'true'
    assert ini['security']['cookie_secure'] == 'false'
    assert ini['auth.anonymous'] == {'enabled': 'false'}
    assert ini['users']['allow_sign_up'] == 'false'
    assert ini['analytics']['reporting_enabled'] == 'false'
    assert ini['analytics']['check_for_updates'] == 'false'
    assert ini['public_dashboards']['enabled'] == 'false'
    assert ini['server'] == {'protocol': 'http', 'http_addr': '0.0.0.0', 'http_port': '3000'}
    assert ini['paths']['provisioning'] == '/etc/grafana/provisioning'
    assert ini['smtp'] == {'enabled': 'true', 'host': 'mail.example:25'}

    provisioning = root / 'etc' / 'grafana' / 'provisioning'
    datasources = yaml.safe_load((provisioning / 'datasources' / 'gpuhpc.yml').read_text())
    assert datasources['apiVersion'] == 1
    [ds] = datasources['datasources']
    assert ds['uid'] == 'gpuhpc-prometheus' and ds['type'] == 'prometheus'
    assert ds['url'] == 'http://localhost:9090'
    assert ds['jsonData']['timeInterval'] == '15s'
    providers = yaml.safe_load((provisioning / 'dashboards' / 'gpuhpc.yml').read_text())
    [provider] = providers['providers']
    assert provider['type'] == 'file' and provider['folder'] == 'GPU HPC'
    # the path as Grafana sees it on the host, not the scratch root
    assert provider['options']['path'] == '/var/lib/grafana/dashboards/gpuhpc'
    assert provider['allowUiUpdates'] is False

    copied = root / 'var' / 'lib' / 'grafana' / 'dashboards' / 'gpuhpc'
    shipped = sorted(os.listdir(DASHBOARDS))
    assert sorted(os.listdir(copied)) == sorted(shipped + ['site-gpfs.json'])
    for name in shipped:
        with open(os.path.join(DASHBOARDS, name), 'rb') as f:
            assert (copied / name).read_bytes() == f.read(), name


def test_install_false_is_idempotent_checks_clean_and_removes_what_it_no_longer_ships(tmp_path):
    extra_dashboard = write(tmp_path / 'site-gpfs.json', json.dumps(dict(uid='site-gpfs', title='GPFS')))
    rc, out, raw, root = render(tmp_path, grafana_dashboards_extra=[extra_dashboard])
    assert rc == 0, raw
    rc, out, raw, root = render(tmp_path, grafana_dashboards_extra=[extra_dashboard])
    assert rc == 0, raw
    assert re.search(r'monitor +: ok=\d+ +changed=0 ', raw), raw
    rc, out, raw, root = render(tmp_path, check=True, verbosity=3, grafana_dashboards_extra=[extra_dashboard])
    assert rc == 0, raw
    assert re.search(r'monitor +: ok=\d+ +changed=0 ', raw), raw
    assert PASSWORD not in raw
    # a new password changes grafana.ini (diff not shown) and nothing else
    rc, out, raw, root = render(tmp_path, check=True, grafana_admin_password='Another#pw-1',
                                grafana_dashboards_extra=[extra_dashboard])
    assert rc == 0, raw
    assert re.search(r'monitor +: ok=\d+ +changed=1 ', raw), raw
    assert 'Another#pw-1' not in raw
    # the extra dashboard taken out of the list goes
    rc, out, raw, root = render(tmp_path)
    assert rc == 0, raw
    assert not (root / 'var' / 'lib' / 'grafana' / 'dashboards' / 'gpuhpc' / 'site-gpfs.json').exists()
    assert (root / 'var' / 'lib' / 'grafana' / 'dashboards' / 'gpuhpc' / 'gpuhpc-slurm.json').exists()


def test_the_inventorys_price_of_a_gpu_hour_reaches_the_team_dashboard(tmp_path):
    # gpu_usage_price and gpu_usage_currency, as group_vars/all sets them for the report too
    rc, out, raw, root = render(tmp_path, gpu_usage_price=2.5, gpu_usage_currency='EUR')
    assert rc == 0, raw
    team = json.loads((root / 'var' / 'lib' / 'grafana' / 'dashboards' / 'gpuhpc' / 'gpuhpc-team-gpu-usage.json')
                      .read_text())
    assert [v['query'] for v in team['templating']['list'] if v['name'] == 'gpu_hour_price'] == ['2.5']
    assert [p['fieldConfig']['defaults']['unit'] for p in team['panels'] if p['title'] == 'Cost by account'] == [
        'suffix: EUR']
    rc, out, raw, root = render(tmp_path, gpu_usage_price=2.5, gpu_usage_currency='EUR')
    assert rc == 0 and re.search(r'monitor +: ok=\d+ +changed=0 ', raw), raw
    rc, out, raw, root = render(tmp_path, check=True, gpu_usage_price='2,5')
    assert rc != 0 and "grafana_gpu_hour_price '2,5' is not a price" in out, raw


def test_a_package_file_alone_is_installed_as_files(tmp_path):
    """grafana_package_file alone installs the file (grafana_install's
    default is then files), checked against its SHA-256 first."""
    package = tmp_path / 'grafana_13.2.3_amd64.deb'
    package.write_bytes(b'not really a package\n')
    real = hashlib.sha256(package.read_bytes()).hexdigest()
    message = f'grafana_package_file {package} has SHA-256 {real}, but grafana_package_sha256 says {"a" * 64}'
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_package_file=str(package), grafana_package_sha256='a' * 64))
    assert rc != 0
    assert message in out, raw
    rc, out, raw = run(tmp_path, PREFLIGHT, good(grafana_install='package', grafana_package_file=str(package),
                                                 grafana_package_sha256=real))
    assert rc != 0
    assert ("grafana_install is package (from Grafana's repository) but grafana_package_file is set: set "
            'grafana_install: files (or leave it out) to install that file, or take grafana_package_file out') in out, raw


LOCAL_URL = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.grafana
        tasks_from: preflight
        public: true
    - ansible.builtin.debug:
        msg: "health check at {{ __grafana_local_url }}/api/health"
'''


@pytest.mark.parametrize('address, tls, url', [
    ('0.0.0.0', False, 'http://127.0.0.1:3000'),
    ('::', False, 'http://[::1]:3000'),
    ('10.1.2.3', True, 'https://10.1.2.3:3000'),
    ('fd00::5', False, 'http://[fd00::5]:3000'),
    ('grafana.cluster.example', False, 'http://grafana.cluster.example:3000'),
])
def test_the_health_check_asks_the_listen_address_or_loopback(tmp_path, address, tls, url):
    extra = dict(grafana_listen_address=address)
    if tls:
        extra.update(grafana_tls_cert_file='/etc/ssl/g.pem', grafana_tls_key_file='/etc/ssl/g.key')
    rc, out, raw = run(tmp_path, LOCAL_URL, good(**extra))
    assert rc == 0, raw
    assert f'health check at {url}/api/health' in out, raw


def test_the_switch_makes_the_data_source_https_with_the_cluster_ca_and_the_password(tmp_path):
    scrape = 'Scr4pe: "pass"'
    rc, out, raw, root = render(tmp_path, web_config_enabled=True, web_config_password=scrape,
                                web_config_pki_dir=str(tmp_path / 'pki'))
    assert rc == 0, raw
    assert scrape not in raw
    path = root / 'etc' / 'grafana' / 'provisioning' / 'datasources' / 'gpuhpc.yml'
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    [ds] = yaml.safe_load(path.read_text())['datasources']
    assert ds['url'] == 'https://localhost:9090'
    assert ds['basicAuth'] is True and ds['basicAuthUser'] == 'prometheus'
    assert ds['jsonData']['tlsAuthWithCACert'] is True and ds['jsonData']['httpMethod'] == 'POST'
    assert ds['secureJsonData']['basicAuthPassword'] == scrape
    # the CA Prometheus' certificate is signed by, made once on the controller
    assert ds['secureJsonData']['tlsCACert'] == (tmp_path / 'pki' / 'ca.pem').read_text()
    rc, out, raw, root = render(tmp_path, web_config_enabled=True, web_config_password=scrape,
                                web_config_pki_dir=str(tmp_path / 'pki'))
    assert re.search(r'monitor +: ok=\d+ +changed=0 ', raw), raw


def test_tls_makes_grafana_serve_https_with_secure_cookies(tmp_path):
    cert = write(tmp_path / 'grafana.pem', 'cert\n')
    key = write(tmp_path / 'grafana.key', 'key\n')
    rc, out, raw, root = render(tmp_path, grafana_tls_cert_file=cert, grafana_tls_key_file=key, grafana_port=3443)
    assert rc == 0, raw
    ini = read_ini(root / 'etc' / 'grafana' / 'grafana.ini')
    assert ini['server'] == {'protocol': 'https', 'http_addr': '0.0.0.0', 'http_port': '3443', 'cert_file': cert,
                             'cert_key': key, 'min_tls_version': 'TLS1.2'}
    assert ini['security']['cookie_secure'] == 'true'
    assert ini['security']['strict_transport_security'] == 'true'
    rc, out, raw, root = render(tmp_path, grafana_tls_cert_file=str(tmp_path / 'missing.pem'), grafana_tls_key_file=key)
    assert rc != 0
    assert f'grafana_tls_cert_file {tmp_path / "missing.pem"} is not a file on monitor' in out, raw


# --- the repository key, checked against Grafana's pin (roles/pinned_repo) -----------

def stand_in_repository(tmp_path):
    """The folder of a stand-in for Grafana's apt repository: the index the role asks for first."""
    repo = tmp_path / 'repo'
    (repo / 'dists' / 'stable').mkdir(parents=True)
    (repo / 'dists' / 'stable' / 'InRelease').write_text('stand-in\n')
    return repo


def key_vars(tmp_path, test_key, **extra):
    return good(__grafana_cache_dir=str(tmp_path / 'cache'), grafana_repo_key_url='file://' + test_key['path'],
                **extra)


def test_grafanas_key_is_pinned():
    with open(os.path.join(ROLE, 'vars', 'main.yml')) as f:
        assert yaml.safe_load(f)['__grafana_repo_key_fingerprint_pinned'] == 'B53AE77BADB630A683046005963FA27710458545'


def test_a_key_that_is_not_the_pinned_one_is_refused(tmp_path, test_key):
    """A real run: the key is downloaded into the (scratch) cache and refused
    before anything else is written."""
    before = snapshot(WRITTEN)
    with served(stand_in_repository(tmp_path)) as url:
        rc, out, raw = run(tmp_path, ROLE_PLAY, key_vars(tmp_path, test_key, grafana_repo_url=url))
    assert rc != 0
    assert (f'monitor: the signing key at file://{test_key["path"]} is not the pinned key (fingerprint '
            f'B53AE77BADB630A683046005963FA27710458545; found {test_key["fingerprint"]}), so the repository was not '
            'configured. If Grafana rotated its key, check the new one (https://apt.grafana.com names it) and set '
            'grafana_repo_key_fingerprint; for a mirror that re-signs the repository set grafana_repo_key_url and '
            'grafana_repo_key_fingerprint.') in out, raw
    assert (tmp_path / 'cache' / 'repo-key.asc').read_text() == open(test_key['path']).read()
    assert snapshot(WRITTEN) == before
    assert PASSWORD not in raw


def test_the_key_with_the_pinned_fingerprint_is_accepted(tmp_path, test_key):
    """--check on a host whose cache holds the key already: the key is checked
    (spaces and lower case in the pin are fine) and the run goes on to the
    repository, writing nothing."""
    cache = tmp_path / 'cache'
    (cache / 'gnupg').mkdir(parents=True, mode=0o700)
    cache.chmod(0o755)
    shutil.copy(test_key['path'], cache / 'repo-key.asc')
    (cache / 'repo-key.asc').chmod(0o644)
    spaced = ' '.join(re.findall('....', test_key['fingerprint'].lower()))
    before = snapshot(WRITTEN)
    with served(stand_in_repository(tmp_path)) as url:
        rc, out, raw = run(tmp_path, ROLE_PLAY, key_vars(tmp_path, test_key, grafana_repo_url=url,
                                                         grafana_repo_key_fingerprint=spaced,
                                                         __grafana_root=str(tmp_path / 'root')), check=True)
    assert rc == 0, raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : Key \| fingerprints of the downloaded key\] \*+\nok:', raw), raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.pinned_repo : Debian \| give apt the checked key\] \*+\nchanged:', raw), raw
    assert '+Signed-By: /etc/apt/keyrings/gpuhpc-grafana.asc' in raw
    assert snapshot(WRITTEN) == before


# --- the install path in --check, against a stand-in repository ----------------------

@contextlib.contextmanager
def served(folder):
    """folder over HTTP on loopback; yields the base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{server.server_address[1]}'
    finally:
        server.shutdown()
        server.server_close()


def test_the_install_path_runs_in_check_mode_and_writes_nothing(tmp_path, test_key):
    """A stand-in repository on loopback answers the probe; --check runs every
    install task that can run without Grafana's packages."""
    with open('/etc/os-release') as f:
        release = dict(line.rstrip('\n').split('=', 1) for line in f if '=' in line)
    if release.get('ID') != 'debian':
        pytest.skip('the check-mode install path is exercised on Debian, the lab and CI distribution')
    before = snapshot(WRITTEN + ['/etc/passwd', '/etc/group'])
    with served(stand_in_repository(tmp_path)) as url:
        rc, out, raw = run(tmp_path, ROLE_PLAY, key_vars(tmp_path, test_key, grafana_repo_url=url,
                                                         __grafana_root=str(tmp_path / 'root')), check=True)
    assert rc == 0, raw
    assert snapshot(WRITTEN + ['/etc/passwd', '/etc/group']) == before
    assert not (tmp_path / 'root').exists()
    assert not (tmp_path / 'cache').exists()
    assert f'+URIs: {url}' in raw and '+Suites: stable' in raw and '+Components: main' in raw
    assert '+Signed-By: /etc/apt/keyrings/gpuhpc-grafana.asc' in raw
    assert '+Pin: version 13.2.3' in raw
    assert PASSWORD not in raw
    assert re.search(r'TASK \[gpuhpc\.slurm\.grafana : Service \| enable and start grafana-server\] \*+\n(task path: .*\n)?skipping',
                     raw), raw


# --- the dashboards' queries, parsed by Prometheus' own parser ------------------------

def promtool_check(tmp_path, exprs):
    promtool = shutil.which('promtool')
    if not promtool:
        pytest.fail('the dashboard query check needs promtool here (make test installs it: the Debian package '
                    'prometheus, or promtool on Debian 13)')
    rules = dict(groups=[dict(name='dashboards', rules=[dict(record=f'gpuhpc_dashboard:query_{i}', expr=e)
                                                        for i, e in enumerate(exprs)])])
    path = tmp_path / 'dashboard-queries.yml'
    path.write_text(yaml.safe_dump(rules))
    version = subprocess.run([promtool, '--version'], capture_output=True, text=True, check=False)
    result = subprocess.run([promtool, 'check', 'rules', str(path)], capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr, (version.stdout + version.stderr).split('\n')[0]


def test_every_dashboard_query_is_valid_promql(tmp_path):
    """Grafana's variables substituted as tests/dashboard_queries.py does, each
    query is parsed by the promtool installed here (Debian 12: Prometheus 2.42,
    the oldest the collection supports)."""
    records = [r for name in sorted(os.listdir(DASHBOARDS))
               for r in dashboard_queries.describe(os.path.join(DASHBOARDS, name))]
    assert len(records) > 100
    rc, out, version = promtool_check(tmp_path, [r['expr_substituted'] for r in records])
    assert rc == 0, version + '\n' + out
    assert f'SUCCESS: {len(records)} rules found' in out, out


def test_the_promql_check_can_fail(tmp_path):
    rc, out = promtool_check(tmp_path, ['sum by (account) (slurm_account_gpus_running{account=~".+"}'])[:2]
    assert rc != 0, out


def test_gpu_hours_by_account_counts_each_minute_a_team_holds_gpus(tmp_path):
    """The shipped 'GPU-hours by account' query, on series as the Slurm exporter
    writes them (a team's series is there while its jobs run, and goes stale
    when they end), through the recording rule it reads: vision holds 2 GPUs
    for 15 minutes (0.5 GPU-hours), nlp 1 GPU for 41 minutes, over a 1 h range."""
    promtool = shutil.which('promtool')
    if not promtool:
        pytest.fail('this test needs promtool here (make test installs it)')
    [record] = [r for r in dashboard_queries.describe(os.path.join(DASHBOARDS, 'gpuhpc-team-gpu-usage.json'))
                if r['panel'] == 'GPU-hours by account']
    series = 'slurm_account_gpus_running{{account="{}",instance="ctl",job="slurm"}}'
    recording = os.path.join(ROOT, 'roles', 'prometheus', 'files', 'rules', 'gpuhpc-recording.yml')
    tests = dict(rule_files=[recording], evaluation_interval='1m', tests=[dict(
        interval='1m',
        input_series=[dict(series=series.format('vision'), values='_x15 2x14 stale'),
                      dict(series=series.format('nlp'), values='_x10 1x40 stale')],
        promql_expr_test=[dict(expr=record['expr_substituted'], eval_time='60m', exp_samples=[
            dict(labels='{account="nlp"}', value=41 / 60),
            dict(labels='{account="vision"}', value=0.5)])])])
    path = tmp_path / 'gpu-hours.yml'
    path.write_text(yaml.safe_dump(tests))
    result = subprocess.run([promtool, 'test', 'rules', str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, record['expr_substituted'] + '\n' + result.stdout + result.stderr
