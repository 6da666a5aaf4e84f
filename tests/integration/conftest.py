"""A real MariaDB for the database check: Debian's mariadbd on loopback, with a
throwaway data folder and TLS from a throwaway CA (lab/tls.sh). Started once
per test session, stopped at its end. Also a throwaway OpenPGP key for the
roles' repository key checks, and what the tests did not run."""
import hashlib
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEEDED = dict(mariadbd='mariadb-server-core', mariadb='mariadb-client-core', openssl='openssl')


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class MariaDB:
    """The server, an admin connection over its socket, and module parameters."""

    def __init__(self, base):
        self.base = base
        self.port = _free_port()
        self.socket = str(base / 'mysqld.sock')
        self.tls = base / 'tls'
        self.other_ca = base / 'other-ca' / 'ca.pem'
        self.proc = None

    def start(self):
        missing = [f'{cmd} (package {pkg})' for cmd, pkg in NEEDED.items()
                   if not shutil.which(cmd, path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin')]
        if missing:
            pytest.fail('the database check tests need a MariaDB server here: missing ' + ', '.join(missing) +
                        '; `make test` installs them as root (apt-get install mariadb-server-core mariadb-client-core)')
        for folder in (self.tls, self.other_ca.parent):
            folder.mkdir()
            subprocess.run([os.path.join(ROOT, 'lab', 'tls.sh'), 'localhost'], cwd=folder, check=True)
        data = self.base / 'data'
        root = ['--user=root'] if os.geteuid() == 0 else []
        subprocess.run(['mariadb-install-db', '--no-defaults', f'--datadir={data}', '--skip-test-db',
                        '--auth-root-authentication-method=socket'] + root,
                       check=True, capture_output=True)
        mariadbd = shutil.which('mariadbd', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin')
        self.log = self.base / 'error.log'
        self.proc = subprocess.Popen(  # pylint: disable=consider-using-with
            [mariadbd, '--no-defaults', f'--datadir={data}', f'--socket={self.socket}', f'--port={self.port}',
             '--bind-address=127.0.0.1', f'--pid-file={self.base}/mysqld.pid', f'--log-error={self.log}',
             f'--ssl-ca={self.tls}/ca.pem', f'--ssl-cert={self.tls}/server.pem', f'--ssl-key={self.tls}/server-key.pem',
             '--innodb-buffer-pool-size=128M', '--innodb-log-file-size=64M', '--innodb-lock-wait-timeout=900',
             '--max-allowed-packet=16M', '--skip-name-resolve'] + root,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail('mariadbd exited: ' + self.log.read_text()[-2000:])
            try:
                self.admin().close()
                return
            except Exception:  # pylint: disable=broad-except
                time.sleep(0.1)
        pytest.fail('mariadbd did not answer within 30 s: ' + self.log.read_text()[-2000:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def admin(self):
        import pymysql
        return pymysql.connect(unix_socket=self.socket, user='root', autocommit=True)

    def sql(self, *statements):
        conn = self.admin()
        try:
            with conn.cursor() as cur:
                rows = None
                for statement in statements:
                    cur.execute(statement)
                    rows = cur.fetchall()
                return rows
        finally:
            conn.close()

    def user(self, name, grants, require_ssl=True):
        """A fresh user with the given GRANT clauses ('ALL ON `db`.*', ...)."""
        self.sql(f"DROP USER IF EXISTS '{name}'@'%'",
                 f"CREATE USER '{name}'@'%' IDENTIFIED BY 'pw-{name}'" + (' REQUIRE SSL' if require_ssl else ''),
                 *[f"GRANT {g} TO '{name}'@'%'" for g in grants])
        return name

    def params(self, user, **extra):
        p = dict(login_host='127.0.0.1', login_port=self.port, login_user=user, login_password=f'pw-{user}',
                 login_db='slurm_acct_db', ca_cert=str(self.tls / 'ca.pem'), check_hostname=True,
                 connect_timeout=5, slurm_version='24.11.5',
                 # the test server runs a small buffer pool; tests of that warning set it back
                 thresholds=dict(innodb_buffer_pool_size='128M'))
        p.update(extra)
        return p


@pytest.fixture(scope='session')
def mariadb(tmp_path_factory):
    server = MariaDB(tmp_path_factory.mktemp('mariadb'))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def pytest_terminal_summary(terminalreporter):
    """Say in the summary, in words, that the dcgm_exporter tests ran no DCGM."""
    why = ('an NVIDIA driver is loaded here, but these tests never install anything'
           if os.path.exists('/proc/driver/nvidia/version') else
           'no NVIDIA GPU (no /proc/driver/nvidia/version) and no access to the NVIDIA repositories')
    _what_did_not_run(terminalreporter, 'test_dcgm_exporter_role.py', 'dcgm_exporter: what did not run', [
        f'NOT RUN HERE: DCGM and dcgm-exporter, {why}',
        'Tested without them: the skip of a host without a driver, preflight, the rendered counters file and '
        'unit, the repository key check, the install path in --check. Not tested: downloading and installing '
        'DCGM, nv-hostengine, the exporter and its metrics, hpc_job labels on real GPUs.'])


def _what_did_not_run(terminalreporter, test_file, title, lines):
    """When `test_file` ran, a section of the summary that says, in words, what it could not run."""
    if not any(test_file + '::' in getattr(report, 'nodeid', '')
               for reports in terminalreporter.stats.values() for report in reports):
        return
    terminalreporter.write_sep('=', title)
    for line in lines:
        terminalreporter.write_line(line)


# More terminal summary hooks beside the one above: pytest calls each (a
# conftest cannot hold two functions of one name, hence specname).
@pytest.hookimpl(specname='pytest_terminal_summary')
def pytest_terminal_summary_grafana(terminalreporter):
    """Say in the summary, in words, that the grafana tests ran no Grafana server."""
    _what_did_not_run(terminalreporter, 'test_grafana_role.py', 'grafana: what did not run', [
        'NOT RUN HERE: Grafana server (its package repository is unreachable from these machines and from the lab)',
        'Tested without it: preflight (admin password, dashboards, paths, grafana_ini_extra, the package file '
        'checksum), the stop on an unreachable repository, grafana.ini, provisioning and dashboards written with '
        'grafana_install none, the repository key check, the install path in --check, every dashboard query '
        'parsed by promtool. Not tested: installing Grafana, grafana-server reading these files, /api/health, '
        'the admin password reset, the dashboards drawn.'])


@pytest.hookimpl(specname='pytest_terminal_summary')
def pytest_terminal_summary_pinned_repo(terminalreporter):
    """Say in the summary, in words, that the pinned_repo tests installed no package."""
    _what_did_not_run(terminalreporter, 'test_pinned_repo.py', 'pinned_repo: what did not run', [
        'NOT RUN HERE: installing packages from a repository or package files (it would change the machine the '
        'tests run on), and the EL tasks',
        'Tested without it: the probe, the key against a fingerprint or a SHA-256 pin, the repository and '
        'preferences files written into a scratch root and read back, idempotence, --check on a new host, '
        'package files refused by SHA-256 or kind.'])


@pytest.fixture(scope='session')
def test_key(tmp_path_factory):
    """A throwaway OpenPGP key, armored, with a Version: header line (as some
    vendors' key files have): its path, fingerprint, and the SHA-256 of the file
    without Version lines (the dcgm_exporter role's second way to pin a key)."""
    if not shutil.which('gpg'):
        pytest.fail('the key tests need gpg here (apt-get install gpg)')
    base = tmp_path_factory.mktemp('gpg')
    home = base / 'home'
    home.mkdir(mode=0o700)
    env = dict(os.environ, GNUPGHOME=str(home))
    subprocess.run(['gpg', '--batch', '--passphrase', '', '--quick-gen-key', 'gpuhpc test <test@example.org>',
                    'ed25519', 'sign', 'never'], env=env, check=True, capture_output=True)
    armored = subprocess.run(['gpg', '--batch', '--armor', '--export'], env=env, check=True,
                             capture_output=True, text=True).stdout
    lines = armored.splitlines(keepends=True)
    key = base / 'key.asc'
    rest = ''.join(line for line in lines[1:] if not line.startswith('Version'))
    key.write_text(lines[0] + 'Version: GnuPG v2 (gpuhpc test)\n' + rest)
    listing = subprocess.run(['gpg', '--batch', '--with-colons', '--list-keys'], env=env, check=True,
                             capture_output=True, text=True).stdout
    fingerprint = re.search(r'^fpr:+([0-9A-F]{40}):', listing, re.M).group(1)
    without_version = ''.join(line for line in key.read_text().splitlines(keepends=True)
                              if not line.startswith('Version'))
    return dict(path=str(key), fingerprint=fingerprint,
                sha256=hashlib.sha256(without_version.encode()).hexdigest())
