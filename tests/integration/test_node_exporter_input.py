"""gpuhpc.slurm.node_exporter: bad input stops the role before anything is
written, with a message that names the variable; and the files the role
renders are right: the arguments file gives node_exporter exactly the
intended argv once systemd has parsed it (the web config's flag with the
cluster's switch on), and the hardened unit parses.

The role's preflight and templates run against local hosts (the inventory of
test_bad_input); nothing is installed."""
import os
import re
import shutil
import subprocess

import pytest

from local_play import ROOT
from test_bad_input import run

SHA = 'a' * 64
PASSWORD = 'Sup3r-secret pass"word'


PREFLIGHT = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.node_exporter
        tasks_from: preflight
'''


def test_good_input_passes(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT)
    assert rc == 0, out


def test_every_option_set_passes(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT, dict(
        node_exporter_install='release', node_exporter_release_sha256=SHA.upper(),
        node_exporter_release_url='https://mirror.example/node_exporter.tar.gz',
        node_exporter_listen_address='[::]:9100',
        node_exporter_collectors_enabled=['processes', 'mountstats', 'systemd'],
        node_exporter_collectors_disabled=['wifi', 'zfs'],
        node_exporter_extra_args=['--collector.filesystem.mount-points-exclude=^/(dev|proc|run|sys)($|/)'],
        web_config_enabled=True, web_config_password=PASSWORD, web_config_pki_dir=str(tmp_path / 'pki')))
    assert rc == 0, out
    assert 'Sup3r-secret' not in out


def test_a_sha256_per_architecture_passes(tmp_path):
    # the local hosts' architecture, in upstream's spelling
    arch = dict(x86_64='amd64', aarch64='arm64').get(os.uname().machine, os.uname().machine)
    rc, out = run(tmp_path, PREFLIGHT, dict(node_exporter_install='release',
                                            node_exporter_release_sha256={arch: SHA, 'ppc64le': 'b' * 64}))
    assert rc == 0, out


@pytest.mark.parametrize('group_vars, message', [
    (dict(node_exporter_install='release'),
     "node_exporter_release_sha256 is empty: node_exporter_install: release needs the SHA-256 of "
     "node_exporter-1.9.1.linux-"),
    (dict(node_exporter_install='release', node_exporter_release_sha256='sha256:' + SHA),
     "node_exporter_release_sha256 for "),
    (dict(node_exporter_install='release', node_exporter_release_sha256={'s390x': SHA}),
     "node_exporter_release_sha256 has no entry for "),
    (dict(node_exporter_install='release', node_exporter_release_sha256=SHA, node_exporter_version='v1.9.1'),
     "node_exporter_version 'v1.9.1' is not a release version such as 1.9.1 (no leading v)"),
    (dict(node_exporter_install='release', node_exporter_release_sha256=SHA, node_exporter_release_file='ne.tgz'),
     "node_exporter_release_file 'ne.tgz' is not an absolute path on the Ansible controller"),
    (dict(node_exporter_collectors_enabled=['gpu', 'cpu']),
     "node_exporter_collectors_enabled names 'gpu', which node_exporter does not have; known collectors: "
     "arp, bcache, bcachefs, bonding, btrfs, buddyinfo, cgroups, conntrack, cpu, "),
    (dict(node_exporter_collectors_disabled=['nvidia']),
     "node_exporter_collectors_disabled names 'nvidia', which node_exporter does not have; known collectors: "),
    (dict(node_exporter_collectors_enabled=['tcpstat'], node_exporter_collectors_disabled=['tcpstat']),
     "node_exporter_collectors_enabled and node_exporter_collectors_disabled both name 'tcpstat': "
     "keep each collector in one list"),
    (dict(node_exporter_collectors_disabled=['systemd']),
     "node_exporter_collectors_disabled names 'systemd': the role always runs the systemd and textfile collectors"),
    (dict(node_exporter_listen_address='0.0.0.0'),
     "node_exporter_listen_address '0.0.0.0' is not ADDRESS:PORT with a port from 1 to 65535 "
     "(e.g. 0.0.0.0:9100 or [::]:9100)"),
    (dict(node_exporter_listen_address='0.0.0.0:70000'),
     "node_exporter_listen_address '0.0.0.0:70000' is not ADDRESS:PORT with a port from 1 to 65535"),
    (dict(node_exporter_listen_address='0.0.0.0:0'),
     "node_exporter_listen_address '0.0.0.0:0' is not ADDRESS:PORT with a port from 1 to 65535"),
    (dict(node_exporter_listen_address='fe80::1:9100'),
     "node_exporter_listen_address 'fe80::1:9100' is not ADDRESS:PORT with a port from 1 to 65535"),
    (dict(node_exporter_textfile_dir='textfiles'),
     "node_exporter_textfile_dir 'textfiles' is not an absolute path"),
    (dict(node_exporter_extra_args=['--web.listen-address=:9200']),
     "node_exporter_extra_args: '--web.listen-address=:9200' sets --web.listen-address, which the role sets "
     "from node_exporter_listen_address: use that instead"),
    (dict(node_exporter_extra_args=['--no-collector.wifi']),
     "node_exporter_extra_args: '--no-collector.wifi' switches a collector: list it in "
     "node_exporter_collectors_enabled or node_exporter_collectors_disabled instead"),
    (dict(node_exporter_extra_args=['collector.wifi']),
     "node_exporter_extra_args: 'collector.wifi' is not a flag (--name or --name=value)"),
    (dict(web_config_enabled=True, web_config_username='prom:etheus', web_config_password=PASSWORD),
     "web_config_username 'prom:etheus' is empty or holds ':', which HTTP basic auth cannot carry"),
    (dict(web_config_enabled=True),
     "web_config_password is empty: web_config_enabled needs the scrape password (vault it)"),
    (dict(web_config_enabled=True, web_config_password=PASSWORD * 4),
     "web_config_password is longer than 72 bytes, and bcrypt ignores what follows byte 72: choose a shorter one"),
])
def test_preflight_names_the_problem(tmp_path, monkeypatch, group_vars, message):
    monkeypatch.setenv('ANSIBLE_VERBOSITY', '2')
    rc, out = run(tmp_path, PREFLIGHT, group_vars)
    assert rc != 0
    assert message in out, out
    assert 'Sup3r-secret' not in out


def test_no_bcrypt_on_the_controller_is_named(tmp_path, monkeypatch):
    # A bcrypt that cannot be imported, ahead of the real one.
    hide = tmp_path / 'hide' / 'bcrypt'
    hide.mkdir(parents=True)
    (hide / '__init__.py').write_text("raise ImportError('bcrypt hidden by the test')\n")
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join(filter(None, [str(hide.parent), os.environ.get('PYTHONPATH')])))
    monkeypatch.setenv('ANSIBLE_VERBOSITY', '2')
    rc, out = run(tmp_path, PREFLIGHT, dict(web_config_enabled=True, web_config_password=PASSWORD,
                                            web_config_pki_dir=str(tmp_path / 'pki')))
    assert rc != 0
    assert ('web_config_password is hashed with bcrypt on the Ansible controller, and the Python that runs '
            'ansible-playbook has no bcrypt module: pip install bcrypt there') in out, out
    assert 'Sup3r-secret' not in out


# --- what the installed binary can do ------------------------------------------------
# Lines in the two --help layouts of node_exporter 1.x: kingpin's "--collector.x"
# (1.5.0, Debian 12's prometheus-node-exporter 1.5.0-1+b6) and "--[no-]collector.x"
# (later releases); before 1.5 the web config flag was --web.config.
HELP_1_5 = """usage: prometheus-node-exporter [<flags>]
      --collector.arp            Enable the arp collector (default: enabled).
      --collector.systemd.unit-include=".+"
      --collector.systemd        Enable the systemd collector (default: disabled).
      --collector.textfile.directory="/var/lib/prometheus/node-exporter"
      --collector.textfile       Enable the textfile collector (default: enabled).
      --collector.wifi           Enable the wifi collector (default: disabled).
      --web.config.file=""       [EXPERIMENTAL] Path to configuration file that can enable TLS or authentication.
"""
HELP_1_9 = """usage: node_exporter [<flags>]
      --[no-]collector.kernel_hung  Enable the kernel_hung collector (default: enabled).
      --[no-]collector.systemd   Enable the systemd collector (default: disabled).
      --[no-]collector.textfile  Enable the textfile collector (default: enabled).
      --[no-]collector.wifi      Enable the wifi collector (default: disabled).
      --web.config.file=""       Path to configuration file that can enable TLS or authentication.
"""
HELP_1_3 = HELP_1_5.replace('--web.config.file=""', '--web.config=""')

PROBE = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.node_exporter
        tasks_from: probe
        public: true
      vars:
        __node_exporter_bin: {fake}
        __node_exporter_pending: false
    - ansible.builtin.debug:
        msg: "web config flag: {{{{ __node_exporter_web_config_flag }}}}"
'''


@pytest.mark.parametrize('help_text, group_vars, flag, missing', [
    (HELP_1_5, dict(node_exporter_collectors_enabled=['wifi']), '--web.config.file', None),
    (HELP_1_5, dict(node_exporter_collectors_enabled=['kernel_hung'], node_exporter_collectors_disabled=['arp']),
     None, 'kernel_hung'),
    (HELP_1_9, dict(node_exporter_collectors_enabled=['kernel_hung'], node_exporter_collectors_disabled=['wifi']),
     '--web.config.file', None),
    (HELP_1_9, dict(node_exporter_collectors_disabled=['arp']), None, 'arp'),
    (HELP_1_3, dict(web_config_result=dict(enabled=True)), '--web.config', None),
    # Nothing to ask: no collector asked for, no web config flag to write.
    (None, {}, '--web.config.file', None),
])
def test_the_installed_binary_is_asked(tmp_path, help_text, group_vars, flag, missing):
    fake = tmp_path / 'node_exporter'
    if help_text is None:
        fake.write_text('#!/bin/sh\necho "asked although nothing needed the answer" >&2\nexit 2\n')
    else:
        (tmp_path / 'help.txt').write_text(help_text)
        fake.write_text(f'#!/bin/sh\n[ "$1" = --help ] && exec cat {tmp_path}/help.txt\nexit 2\n')
    fake.chmod(0o755)
    rc, out = run(tmp_path, PROBE.format(fake=fake), group_vars)
    if missing:
        assert rc != 0
        assert (f"node_exporter_collectors_enabled / node_exporter_collectors_disabled name '{missing}', which the "
                f"installed {fake} does not have (see its --help)") in out, out
    else:
        assert rc == 0, out
        assert f'web config flag: {flag}' in out, out


# --- release mode, up to the download (check mode: nothing is written) ---------------

RELEASE_CHECK = '''
- hosts: ctl
  gather_facts: true
  tasks:
    - ansible.builtin.include_vars: {root}/roles/node_exporter/vars/Debian.yml
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.node_exporter
        tasks_from: release
'''


@pytest.mark.parametrize('good', [True, False])
def test_a_local_tarball_is_checked_on_the_controller(tmp_path, good):
    tarball = tmp_path / 'node_exporter-1.9.1.linux-amd64.tar.gz'
    tarball.write_bytes(b'not really a tarball')
    digest = subprocess.run(['sha256sum', str(tarball)], capture_output=True, text=True, check=True).stdout.split()[0]
    rc, out = run(tmp_path, RELEASE_CHECK.format(root=ROOT), dict(
        node_exporter_install='release', node_exporter_release_file=str(tarball),
        node_exporter_release_sha256=digest if good else SHA), check=True)
    if good:
        assert rc == 0, out
        assert 'copy the tarball to the host' in out, out
    else:
        assert rc != 0
        assert (f'node_exporter_release_file {tarball} has SHA-256 {digest}, but node_exporter_release_sha256 says '
                f'{SHA} for node_exporter-1.9.1.linux-') in out, out


# --- rendering ------------------------------------------------------------------

RENDER = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.node_exporter
        tasks_from: preflight
        public: true
    - ansible.builtin.include_vars: {root}/roles/node_exporter/vars/Debian.yml
    - name: Render the arguments file
      ansible.builtin.template:
        src: {root}/roles/node_exporter/templates/node_exporter.env.j2
        dest: "{out}/{{{{ inventory_hostname }}}}.env"
        mode: "0600"
    - name: Render the unit
      ansible.builtin.template:
        src: {root}/roles/node_exporter/templates/node_exporter.service.j2
        dest: "{out}/{{{{ inventory_hostname }}}}.service"
        mode: "0600"
'''


def render(tmp_path, group_vars, check=False):
    out = tmp_path / 'out'
    out.mkdir(exist_ok=True)
    work = tmp_path / ('check' if check else 'run')
    work.mkdir(exist_ok=True)
    group_vars = dict(dict(web_config_result=dict(enabled=False, path='')), **group_vars)
    rc, log = run(work, RENDER.format(root=ROOT, out=out), group_vars, check=check)
    assert rc == 0, log
    changed = [int(n) for n in re.findall(r'changed=(\d+)', log)]
    assert len(changed) == 2, log
    return out, sum(changed), log


# What gpuhpc.slurm.web_config tells the role with the switch on.
AUTH = dict(web_config_result=dict(enabled=True, path='/etc/gpuhpc/web/node_exporter/web-config.yml'))


# --- the arguments file as systemd reads it ------------------------------------------
# Emulation of systemd's two steps (src/basic/env-file.c; extract_first_word()
# with EXTRACT_UNQUOTE|EXTRACT_RELAX as replace_env_argv() uses for $VAR).

def systemd_env_value(line):
    """VAR="..." as EnvironmentFile= reads it: in double quotes, \\ escapes one of " \\ ` $."""
    name, rest = line.split('=', 1)
    assert rest.startswith('"') and rest.endswith('"'), line
    value, body, i = [], rest[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == '\\' and i + 1 < len(body):
            nxt = body[i + 1]
            value.append(nxt if nxt in '"\\`$' else c + nxt)
            i += 2
            continue
        assert c != '"', 'unescaped quote in ' + line
        value.append(c)
        i += 1
    return name, ''.join(value)


def systemd_split(value):
    """$VAR on ExecStart=: words at whitespace, quotes removed, backslash escapes the next character."""
    words, word, quote, i, started = [], [], None, 0, False
    while i < len(value):
        c = value[i]
        if c == '\\':
            word.append(value[i + 1] if i + 1 < len(value) else '')
            i, started = i + 2, True
            continue
        if quote:
            if c == quote:
                quote = None
            else:
                word.append(c)
        elif c in '\'"':
            quote, started = c, True
        elif c.isspace():
            if started:
                words.append(''.join(word))
            word, started = [], False
        else:
            word.append(c)
            started = True
        i += 1
    if started:
        words.append(''.join(word))
    return words


def test_systemd_split_emulation():
    assert systemd_split(r'a "b c" d\ e \"f \\g') == ['a', 'b c', 'd e', '"f', '\\g']


TRICKY = [
    '--collector.filesystem.mount-points-exclude=^/(dev|proc|run|sys|var/lib/docker/.+)($|/)',
    r'--collector.systemd.unit-include=(slurm.*|munge)\.service',
    '--collector.netdev.device-exclude=^(veth.*|docker[0-9]+)$',
    '--web.telemetry-path=/metrics',
    '--collector.sysctl.include=kernel.hostname with "quotes" and \'single\' ones',
    '--collector.textfile.directory.unused=`not a command` ${HOME} $$',
]


def test_the_arguments_reach_node_exporter_as_written(tmp_path):
    out = render(tmp_path, dict(
        AUTH, node_exporter_listen_address='[::]:9100', node_exporter_textfile_dir='/srv/text files',
        node_exporter_collectors_enabled=['processes', 'systemd'], node_exporter_collectors_disabled=['wifi'],
        node_exporter_extra_args=TRICKY))[0]
    lines = [line for line in (out / 'ctl.env').read_text().splitlines() if line and not line.startswith('#')]
    assert len(lines) == 1, lines
    name, value = systemd_env_value(lines[0])
    assert name == 'ARGS'
    # Debian's init script sources the same file with a shell: it must read the same value.
    shell = subprocess.run(['bash', '-c', 'set -eu; . "$0"; printf %s "$ARGS"', str(out / 'ctl.env')],
                           capture_output=True, text=True, check=True, env=dict(os.environ, HOME='/root'))
    assert shell.stdout == value
    assert systemd_split(value) == [
        '--web.listen-address=[::]:9100', '--collector.systemd', '--collector.textfile',
        '--collector.textfile.directory=/srv/text files', '--collector.processes', '--no-collector.wifi',
        '--web.config.file=/etc/gpuhpc/web/node_exporter/web-config.yml'] + TRICKY


def test_plain_arguments_stay_readable(tmp_path):
    out = render(tmp_path, {})[0]
    assert (out / 'ctl.env').read_text().splitlines()[-1] == (
        'ARGS="--web.listen-address=0.0.0.0:9100 --collector.systemd --collector.textfile '
        '--collector.textfile.directory=/var/lib/prometheus/node-exporter"')


def test_the_hardened_unit_parses(tmp_path):
    analyze = shutil.which('systemd-analyze')
    if not analyze:
        pytest.skip('systemd-analyze is not installed here (package systemd)')
    out = render(tmp_path, {})[0]
    unit = (out / 'ctl.service').read_text()
    for line in ('NoNewPrivileges=true', 'ProtectSystem=strict', 'CapabilityBoundingSet=',
                 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK', 'MemoryDenyWriteExecute=true',
                 'User=node-exporter', 'ExecStart=/usr/local/bin/node_exporter $ARGS'):
        assert line in unit.splitlines(), line
    # systemd-analyze wants the program and the environment file to exist.
    (tmp_path / 'env').write_text('ARGS=""\n')
    unit = unit.replace('/usr/local/bin/node_exporter', shutil.which('true')).replace(
        'EnvironmentFile=/etc/default/node_exporter', f'EnvironmentFile={tmp_path}/env')
    path = tmp_path / 'unit' / 'node_exporter.service'
    path.parent.mkdir()
    path.write_text(unit)
    result = subprocess.run([analyze, 'verify', str(path)], capture_output=True, text=True, check=False)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text
    assert not re.search(r'Unknown|Failed to parse|Invalid|ignoring', text), text
