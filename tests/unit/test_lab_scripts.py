"""`make lab` on a machine where it cannot work: one message that says what is
missing and how to get it, a non-zero exit, and nothing half-made left
behind. tools/engine.sh and lab/image.sh run for real; what they would call
(docker, id, debootstrap, apt-get) is stood in for by small scripts first on
PATH, and /usr/sbin is left off PATH so the machine's own debootstrap (if
any) stays out of sight."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stand_ins(tmp_path, uid, docker='exit 1', debootstrap=None):
    """A folder of stand-in commands; each records its argv in calls.log."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    log = tmp_path / 'calls.log'
    scripts = dict(docker=docker, id=f'[ "$1" = -u ] && echo {uid} || /usr/bin/id "$@"',
                   debootstrap=debootstrap, **{'apt-get': 'exit 1'})
    for name, body in scripts.items():
        if body is None:
            continue
        path = bin_dir / name
        path.write_text(f'#!/bin/bash\necho "{name} $*" >> {log}\n{body}\n')
        path.chmod(0o755)
    return bin_dir, log


def run(tmp_path, argv, bin_dir):
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    env = dict(PATH=f'{bin_dir}:/usr/bin:/bin', TMPDIR=str(scratch), HOME=str(tmp_path), LANG='C.UTF-8')
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    return result, sorted(p.name for p in scratch.iterdir())


def calls(log):
    """The stand-ins called, but id."""
    return [c for c in (log.read_text().splitlines() if log.exists() else []) if not c.startswith('id ')]


def test_no_engine_and_not_root(tmp_path):
    bin_dir, log = stand_ins(tmp_path, uid=1000)
    result, left = run(tmp_path, ['tools/engine.sh'], bin_dir)
    assert result.returncode == 1
    assert result.stderr == (
        "[engine] ERROR: no Docker engine answers and you are not root. Either start Docker and add yourself to "
        "the 'docker' group (then log in again), or run this as root so the engine can be installed and started.\n")
    assert calls(log) == ['docker info']
    assert not left


def test_make_lab_stops_at_the_engine_before_anything_is_made(tmp_path):
    bin_dir, log = stand_ins(tmp_path, uid=1000)
    result = run(tmp_path, ['tools/lab.sh'], bin_dir)[0]
    assert result.returncode == 1
    assert 'no Docker engine answers and you are not root' in result.stderr
    assert '[lab]' not in result.stdout + result.stderr
    assert calls(log) == ['docker info']


# docker that answers, has no image and reaches no registry
NO_REGISTRY = 'case "$1" in info) exit 0;; *) exit 1;; esac'


@pytest.mark.parametrize('uid, debootstrap, message', [
    (1000, None,
     'cannot build gpuhpc-lab/debian:trixie: no container registry answers and debootstrap is missing. Install it '
     '(apt-get install debootstrap) and run again as root, or make a registry with debian:trixie reachable.'),
    (1000, 'exit 0',
     'cannot build gpuhpc-lab/debian:trixie: no container registry answers and debootstrap needs root. '
     'Run again as root (sudo make lab).'),
    (0, 'mkdir -p "$3/half-made"; echo "E: cannot reach $4" >&2; exit 1',
     'debootstrap of trixie from http://deb.debian.org/debian failed (see above); '
     'set GPUHPC_LAB_MIRROR to a reachable Debian mirror'),
])
def test_no_registry_and_no_way_to_build_the_image(tmp_path, uid, debootstrap, message):
    bin_dir, log = stand_ins(tmp_path, uid=uid, docker=NO_REGISTRY, debootstrap=debootstrap)
    result, left = run(tmp_path, ['lab/image.sh', 'trixie', 'gpuhpc-lab/debian:trixie'], bin_dir)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == '[lab-image] ERROR: ' + message
    assert result.stdout == ''
    assert not left, 'left behind in TMPDIR: %s' % left
    made = [c for c in calls(log) if c.startswith('docker') and c.split()[1] in ('import', 'build', 'tag')]
    assert not made
    tried = [c for c in calls(log) if c.startswith('debootstrap')]
    assert len(tried) == (2 if uid == 0 else 0)
