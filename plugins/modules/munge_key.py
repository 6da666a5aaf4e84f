#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: munge_key
short_description: Manage a munge key file without ever printing it
version_added: 0.1.0
description:
  - Writes a munge key, given base64-encoded, to a file, byte for byte and
    atomically, or makes a new random key when none is given and the file is
    absent.
  - An existing key file is never regenerated. The key never appears in the
    result, the diff or an error message; only a short SHA-256 fingerprint does.
  - Unlike M(ansible.builtin.copy) with C(content), binary keys survive intact.
  - Where the fact C(file_states) (M(gpuhpc.slurm.host_facts) option C(files), read by site.yml at the start of
    the run) shows the key file in place (its SHA-256, owner, group and mode) and O(key) is given, the action
    returns unchanged without contacting the host (C(host_contacted=false)); the module runs for a path no
    pattern of that fact covers, for a delegated task, and where there is no such fact.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
options:
  path:
    description: Path of the key file.
    type: path
    default: /etc/munge/munge.key
  key:
    description:
      - Base64 of the key (whitespace ignored). At least 32 bytes once decoded.
      - When omitted, the file is left as it is if it exists (it must hold at
        least 32 bytes), and a random 1024-byte key is made if it does not.
    type: str
extends_documentation_fragment:
  - ansible.builtin.files
attributes:
  check_mode:
    support: full
    description: Reports what would change and writes nothing.
  diff_mode:
    support: full
    description: Shows the key fingerprint before and after, never the key.
notes:
  - Use C(no_log) on the task when passing O(key). The module marks it as
    secret, but the task's arguments may still be shown by callbacks.
'''

EXAMPLES = r'''
- name: Install the cluster's munge key from the vault
  gpuhpc.slurm.munge_key:
    key: "{{ munge_key }}"
    owner: munge
    group: munge
    mode: "0400"
  no_log: true

- name: Make a key on the controller once (never regenerated)
  gpuhpc.slurm.munge_key:
    owner: munge
    group: munge
    mode: "0400"
'''

RETURN = r'''
host_contacted:
  description: False where the run's C(file_states) fact showed everything in place and the host was not contacted.
  type: bool
  returned: when false
path:
  description: Path of the key file.
  returned: always
  type: str
  sample: /etc/munge/munge.key
size:
  description: Length of the key in bytes (0 in check mode when no key exists yet).
  returned: always
  type: int
  sample: 1024
fingerprint:
  description: First 16 hex digits of the SHA-256 of the key; equal on hosts that share a key.
  returned: always
  type: str
  sample: 3f0a9c2e4b7d1e55
generated:
  description: Whether a new random key was made.
  returned: always
  type: bool
'''

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuhpc.slurm.plugins.module_utils.munge import (
    MUNGE_KEY_GENERATED_BYTES,
    MungeKeyError,
    check_length,
    decode_key,
    fingerprint,
)


def read_key(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_key(module, path, key):
    directory = os.path.dirname(path) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.munge.key.', dir=directory)
    try:
        os.fchmod(fd, 0o400)
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    module.atomic_move(tmp, path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/etc/munge/munge.key'),
            key=dict(type='str', no_log=True),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    path = module.params['path']

    given = None
    if module.params['key'] is not None:
        try:
            given = decode_key(module.params['key'], 'key')
        except MungeKeyError as e:
            module.fail_json(msg=to_native(e))

    if not os.path.isdir(os.path.dirname(path) or '.'):
        if module.check_mode:
            # A check run before munge is installed: the key would be written.
            module.exit_json(changed=True, path=path, size=0, fingerprint='', generated=given is None)
        module.fail_json(msg='the directory of %s does not exist: install munge first' % path)

    current = read_key(path)
    generated = False
    if given is not None:
        wanted = given
    elif current is not None:
        try:
            check_length(current, 'the existing key file %s' % path)
        except MungeKeyError as e:
            module.fail_json(msg=to_native(e))
        wanted = current
    else:
        wanted = os.urandom(MUNGE_KEY_GENERATED_BYTES)
        generated = True

    changed = current != wanted
    before = 'absent' if current is None else 'key %s (%d bytes)' % (fingerprint(current), len(current))
    after = 'key %s (%d bytes)' % (fingerprint(wanted), len(wanted))
    if generated:
        after = 'a new random key (%d bytes)' % len(wanted)
    diff = dict(before_header=path, after_header=path, before=before + '\n', after=after + '\n')

    if changed and not module.check_mode:
        write_key(module, path, wanted)

    if os.path.exists(path):
        file_args = module.load_file_common_arguments(module.params)
        changed = module.set_fs_attributes_if_different(file_args, changed)

    exists_after = not (generated and module.check_mode)
    module.exit_json(
        changed=changed,
        path=path,
        size=len(wanted) if exists_after else 0,
        fingerprint=fingerprint(wanted) if exists_after else '',
        generated=generated,
        diff=diff,
    )


if __name__ == '__main__':
    main()
