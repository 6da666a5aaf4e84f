"""Run a test's playbook with ansible-playbook against local hosts (connection
local, nothing remote), the collection's ansible.cfg in force. Shared by the
integration tests of the roles."""
import contextlib
import functools
import http.server
import json
import os
import re
import subprocess
import textwrap
import threading

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def inventory(groups, group_vars=None):
    """An inventory of local hosts: groups maps a group name to its hosts
    (host name -> host vars, or None); group_vars apply to all of them."""
    return dict(all=dict(
        vars=dict(dict(ansible_connection='local', ansible_python_interpreter='{{ ansible_playbook_python }}'),
                  **(group_vars or {})),
        children={group: dict(hosts=hosts) for group, hosts in groups.items()}))


def play(tmp_path, playbook, hosts, extra_vars=None, check=False, verbosity=0, args=()):
    """Write hosts (an inventory()) and playbook into tmp_path and run them;
    with check, as --check --diff on the command line (ansible_check_mode is
    true only then, not under a play's check_mode: true). Returns rc, the
    output on one line with quotes as written (the YAML callback folds lines
    and doubles quotes), and the raw output. args go to ansible-playbook as
    they are (--limit ...)."""
    (tmp_path / 'hosts.yml').write_text(yaml.safe_dump(hosts))
    (tmp_path / 'play.yml').write_text(textwrap.dedent(playbook))
    cmd = ['ansible-playbook', '-i', str(tmp_path / 'hosts.yml'), str(tmp_path / 'play.yml')]
    if extra_vars:
        (tmp_path / 'extra.json').write_text(json.dumps(extra_vars))
        cmd += ['-e', '@' + str(tmp_path / 'extra.json')]
    if check:
        cmd += ['--check', '--diff']
    if verbosity:
        cmd.append('-' + 'v' * verbosity)
    cmd += list(args)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_NOCOLOR='1')
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    raw = result.stdout + result.stderr
    return result.returncode, ' '.join(raw.replace("''", "'").split()), raw


def snapshot(paths):
    """What exists of paths, with its mtime: to show a run touched none of it."""
    return {p: os.stat(p).st_mtime_ns for p in paths if os.path.lexists(p)}


@contextlib.contextmanager
def served(folder, handler=http.server.SimpleHTTPRequestHandler):
    """folder over HTTP on a free loopback port; yields the base URL."""
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield 'http://127.0.0.1:%d' % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def changed(raw):
    """The changed count of the PLAY RECAP in an ansible-playbook output."""
    return int(re.search(r'changed=(\d+)', raw).group(1))
