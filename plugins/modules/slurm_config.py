#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm's configuration files in one call, and what their change takes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: slurm_config
short_description: Write slurm.conf and its companion files in one call, and say whether the change takes a restart
version_added: 0.1.0
description:
  - Makes the configuration folder and writes each file atomically (or removes it), with one round trip to the host
    for all of them.
  - Compares the slurm.conf it replaces with the new one, key by key, and returns the keys that changed and whether
    one of them takes a daemon restart (slurm.conf(5) lists the keys that C(scontrol reconfigure) does not apply),
    or whether a reconfigure is enough.
  - Where the fact C(file_states) (M(gpuhpc.slurm.host_facts) option C(files), read by site.yml at the start of
    the run) shows every path of the call in place as asked, the action returns unchanged without contacting the
    host (C(host_contacted=false)); the module runs for a path no pattern of that fact covers, for a delegated task, and where there is
    no such fact.
options:
  dir:
    description: The configuration folder (made when missing, mode 0755, owned by root).
    type: path
    required: true
  files:
    description:
      - File name (in O(dir)) to its whole content; C(null) for a file that must be absent (a configless compute
        node keeps no local copy).
    type: dict
    required: true
  slurm_version:
    description:
      - The Slurm release (C(MAJOR.MINOR)) whose restart rules apply. Up to 23.02, more keys take a restart
        (C(AccountingStorageEnforce), C(MaxJobCount), C(MaxNodeCount), C(CoreSpecPlugin), C(PowerPlugin)).
      - Omitted, the rules of the oldest release apply (the safe side).
    type: str
  owner:
    description: Owner of the files.
    type: str
    default: root
  group:
    description: Group of the files.
    type: str
    default: root
  mode:
    description: Mode of the files.
    type: str
    default: "0644"
attributes:
  check_mode:
    support: full
    description: Reports what would change, and returns the same fields, and writes nothing.
  diff_mode:
    support: full
    description: Shows each changed file, its content before and after.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
"""

EXAMPLES = r"""
- name: Slurm's configuration
  gpuhpc.slurm.slurm_config:
    dir: /etc/slurm
    files:
      slurm.conf: "{{ lookup('ansible.builtin.template', 'slurm.conf.j2') }}"
      gres.conf: "{{ lookup('ansible.builtin.template', 'gres.conf.j2') }}"
      cgroup.conf: "{{ lookup('ansible.builtin.template', 'cgroup.conf.j2') }}"
  register: __slurm_conf
"""

RETURN = r"""
host_contacted:
  description: False where the run's C(file_states) fact showed everything in place and the host was not contacted.
  type: bool
  returned: when false
changed_files:
  description: The names of the files that changed (content, existence, owner, group or mode).
  type: list
  elements: str
  returned: always
  sample: [slurm.conf]
changed_keys:
  description:
    - The slurm.conf keys (lower case) whose value changed, the line types (nodename, partitionname) that did, then
      what changed node by node, for example C(gpu-02 RealMemory 8192 -> 7168) or C(gpu-03 added).
  type: list
  elements: str
  returned: always
  sample: [schedulerparameters]
restart:
  description: Whether the slurm.conf change takes a restart of slurmctld and slurmd (a new file always does).
  type: bool
  returned: always
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible_collections.gpuhpc.slurm.plugins.module_utils.files import put, read
from ansible_collections.gpuhpc.slurm.plugins.module_utils.slurm_conf import changes


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dir=dict(type='path', required=True),
            files=dict(type='dict', required=True),
            owner=dict(type='str', default='root'),
            group=dict(type='str', default='root'),
            mode=dict(type='str', default='0644'),
            slurm_version=dict(type='str'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    diffs = []
    changed_files = []
    keys, restart = [], False
    try:
        if any(content is not None for content in p['files'].values()):
            put(module, dict(path=p['dir'], state='directory', owner='root', group='root', mode='0755'), diffs)
        for name in sorted(p['files']):
            if '/' in name:
                module.fail_json(msg="files: '%s' is not a file name in %s" % (name, p['dir']))
            path = os.path.join(p['dir'], name)
            content = p['files'][name]
            if content is None:
                spec = dict(path=path, state='absent')
            else:
                spec = dict(path=path, content=content, owner=p['owner'], group=p['group'], mode=p['mode'])
            old = read(path) if name == 'slurm.conf' and content is not None else None
            if put(module, spec, diffs):
                changed_files.append(name)
                if name == 'slurm.conf' and content is not None:
                    change = changes(to_text(old or b'', errors='surrogate_or_replace'), content, p['slurm_version'])
                    keys, restart = change['keys'], change['restart']
    except (IOError, OSError) as e:
        module.fail_json(msg='%s: %s' % (p['dir'], to_native(e)), changed=bool(changed_files),
                         changed_files=changed_files)
    result = dict(changed=bool(changed_files), changed_files=changed_files, changed_keys=keys, restart=restart)
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
