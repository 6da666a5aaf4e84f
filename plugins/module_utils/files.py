# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Folders and files put in place atomically, with owner, group and mode, in
check and diff mode: what gpuhpc.slurm.config_files and
gpuhpc.slurm.slurm_config share.

A spec is a dict: path, state (file, directory or absent), content (file),
validate (file: a command that checks the new content, %s its temporary
file), owner, group, mode. put(module, spec, diffs) returns whether the path changed
and appends what changed to diffs (Ansible's list-of-diffs form).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fnmatch
import os
import shutil
import tempfile

from ansible.module_utils.common.text.converters import to_bytes, to_text


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def _attributes(module, spec, changed, diff):
    args = module.load_file_common_arguments(
        dict(path=spec['path'], owner=spec.get('owner'), group=spec.get('group'), mode=spec.get('mode')))
    return module.set_fs_attributes_if_different(args, changed, diff, expand=False)


def _absent(module, spec, diffs):
    path = spec['path']
    if not os.path.lexists(path):
        return False
    kind = 'directory' if os.path.isdir(path) and not os.path.islink(path) else 'file'
    diffs.append(dict(before_header=path, after_header=path, before=dict(state=kind), after=dict(state='absent')))
    if not module.check_mode:
        if kind == 'directory':
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return True


def _directory(module, spec, diffs):
    path = spec['path']
    changed = False
    if not os.path.lexists(path):
        diffs.append(dict(before_header=path, after_header=path, before=dict(state='absent'),
                          after=dict(state='directory')))
        if module.check_mode:
            return True
        # Missing parents too, with the umask's mode, as ansible.builtin.file
        # makes them. Two hosts on shared storage (the controllers'
        # StateSaveLocation) may make the same folder at once: one of them
        # finds it made.
        try:
            os.makedirs(path)
        except OSError as e:
            if e.errno != errno.EEXIST or not os.path.isdir(path):
                raise
        changed = True
    elif not os.path.isdir(path):
        module.fail_json(msg='%s exists and is not a folder: move it away, or give files[].state=file' % path)
    diff = dict(before_header=path, after_header=path, before={}, after={})
    changed = _attributes(module, spec, changed, diff)
    if diff['before']:
        diffs.append(diff)
    return changed


def _validate(module, spec, tmp):
    """Run the spec's validate command on the new content (tmp), as
    ansible.builtin.copy's validate does; the old file stays when it fails."""
    command = spec.get('validate')
    if not command:
        return
    if '%s' not in command:
        module.fail_json(msg="files[] entry %s: validate '%s' has no %%s for the file to check" % (spec['path'], command))
    rc, out, err = module.run_command(command % tmp)
    if rc != 0:
        os.unlink(tmp)
        module.fail_json(msg='%s was not changed: %s failed (rc %d): %s'
                         % (spec['path'], command % spec['path'], rc, (err or out).strip()))


def _file(module, spec, diffs):
    path = spec['path']
    if spec.get('content') is None:
        module.fail_json(msg='files[] entry %s has state=file and no content: give its content' % path)
    new = to_bytes(spec['content'], errors='surrogate_or_strict')
    exists = os.path.lexists(path)
    if exists and (os.path.isdir(path) or os.path.islink(path)):
        module.fail_json(msg='%s is a folder or a link, not a file: remove it, or give files[].state' % path)
    old = _read(path) if exists else None
    changed = False
    if old != new:
        diffs.append(dict(before_header=path, after_header=path,
                          before=to_text(old, errors='surrogate_or_replace') if exists else '',
                          after=to_text(new, errors='surrogate_or_replace')))
        if module.check_mode:
            return True
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):
            module.fail_json(msg='the folder of %s does not exist: list it first, with files[].state=directory' % path)
        fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=folder)
        try:
            with os.fdopen(fd, 'wb') as f:
                f.write(new)
            _validate(module, spec, tmp)
            module.atomic_move(tmp, path, unsafe_writes=False)
        except Exception:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        changed = True
    diff = dict(before_header=path, after_header=path, before={}, after={})
    changed = _attributes(module, spec, changed, diff)
    if diff['before']:
        diffs.append(diff)
    return changed


ACTIONS = dict(absent=_absent, directory=_directory, file=_file)


def unlisted(folder, patterns, listed):
    """The files of folder (not its subfolders) whose names match one of the
    shell-style patterns and whose paths are not in listed, sorted; none when
    the folder is missing (check mode before it is made)."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if any(fnmatch.fnmatchcase(name, p) for p in patterns)
                  and os.path.join(folder, name) not in listed
                  and not os.path.isdir(os.path.join(folder, name)))


def read(path):
    """A file's bytes, or None when there is none."""
    return _read(path) if os.path.isfile(path) else None


def put(module, spec, diffs):
    """Put one spec in place; True when it changed."""
    if not os.path.isabs(spec['path']):
        module.fail_json(msg="path '%s' is not an absolute path" % spec['path'])
    return ACTIONS[spec.get('state') or 'file'](module, spec, diffs)
