# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host's managed files are, read once per run, and whether a role's
file specs are in place by that record.

read() runs on the host (gpuhpc.slurm.host_facts, option files): for each
shell-style pattern, the paths that match it, with their kind, owner, group,
mode and, for a regular file, the SHA-256 of its content. in_place() runs on
the controller (the config_files action): a spec list in the form of
gpuhpc.slurm.config_files's files option is in place when each spec's path
is covered by a pattern that was read and what was read is what the spec
asks for. Anything it cannot tell (a symbolic mode, a purge, a path no
pattern covers) counts as not in place: the module then runs, as it would
without the record.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import glob
import grp
import hashlib
import os
import pwd
import stat

# A larger file is not hashed (its spec counts as not in place).
MAX_HASHED = 1024 * 1024


def _name(lookup, ident):
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def _state(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        kind = 'link'
    elif stat.S_ISDIR(st.st_mode):
        kind = 'directory'
    elif stat.S_ISREG(st.st_mode):
        kind = 'file'
    else:
        kind = 'other'
    out = dict(state=kind, mode='%04o' % stat.S_IMODE(st.st_mode), uid=st.st_uid, gid=st.st_gid,
               owner=_name(pwd.getpwuid, st.st_uid), group=_name(grp.getgrgid, st.st_gid))
    if kind == 'file' and st.st_size <= MAX_HASHED:
        digest = hashlib.sha256()
        with open(path, 'rb') as f:
            digest.update(f.read())
        out['sha256'] = digest.hexdigest()
    return out


def _split(patterns):
    return ([p for p in patterns if not p.startswith('!')], [p[1:] for p in patterns if p.startswith('!')])


def read(patterns):
    """{'patterns': [...], 'paths': {path: {state, mode, uid, gid, owner, group[, sha256]}}} of the existing
    paths that match the absolute shell-style patterns (glob's rules: * stops at /, and skips names with a
    leading dot). A pattern that starts with ! leaves out what it matches (a file that holds a password,
    whose unsalted hash would tell it to whoever can try guesses)."""
    take, leave = _split(patterns)
    paths = {}
    for pattern in take:
        for path in glob.glob(pattern):
            if _matches(path, leave):
                continue
            try:
                paths[path] = _state(path)
            except OSError:  # gone since glob saw it
                pass
    return dict(patterns=list(patterns), paths=paths)


def _matches(path, patterns):
    parts = path.split('/')
    for pattern in patterns:
        pparts = pattern.split('/')
        if len(pparts) == len(parts) and all(
                (not name.startswith('.') or pat.startswith('.')) and fnmatch.fnmatchcase(name, pat)
                for name, pat in zip(parts, pparts)):
            return True
    return False


def covered(path, patterns):
    """Whether read(patterns) would list path if it existed (glob's rules, part by part)."""
    take, leave = _split(patterns)
    return _matches(path, take) and not _matches(path, leave)


def _mode(value):
    text = str(value)
    if text.startswith('0o'):
        text = text[2:]
    if not text or any(c not in '01234567' for c in text):
        return None
    return int(text, 8)


def _same_id(wanted, name, number):
    return wanted is None or str(wanted) in (name, str(number))


def in_place(spec, states):
    """Whether one spec (path, state, content or the sha256 of a binary content, owner, group, mode; purge,
    validate) is in place by states."""
    path = spec.get('path')
    if not isinstance(path, str) or not path.startswith('/') or spec.get('purge'):
        return False
    path = os.path.normpath(path)
    if not covered(path, states.get('patterns') or []):
        return False
    found = (states.get('paths') or {}).get(path)
    wanted = spec.get('state') or 'file'
    if wanted == 'absent':
        return found is None
    if found is None or found.get('state') != wanted:
        return False
    if wanted == 'file':
        digest = spec.get('sha256')
        if digest is None and isinstance(spec.get('content'), str):
            digest = hashlib.sha256(spec['content'].encode('utf-8', 'surrogateescape')).hexdigest()
        if digest is None or digest != found.get('sha256'):
            return False
    elif wanted != 'directory':
        return False
    if spec.get('mode') is not None and _mode(spec['mode']) != _mode(found.get('mode')):
        return False
    return (_same_id(spec.get('owner'), found.get('owner'), found.get('uid'))
            and _same_id(spec.get('group'), found.get('group'), found.get('gid')))


def all_in_place(specs, states):
    """Whether every spec is in place by states (False for no states, or a spec list of another shape)."""
    if not isinstance(states, dict) or not isinstance(specs, list) or not specs:
        return False
    return all(isinstance(spec, dict) and in_place(spec, states) for spec in specs)
