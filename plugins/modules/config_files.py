#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several files and folders of one role, put in place in one module call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: config_files
short_description: Put a role's folders and files in place in one call, and say which changed
version_added: 0.1.0
description:
  - Makes each folder, writes each file atomically (a temporary file in the same folder, then a rename) and removes
    each path that must be absent, in the order given, and sets owner, group and mode.
  - One call for the files that belong together, where one M(ansible.builtin.file) or M(ansible.builtin.copy) task
    per file would cost one round trip to the host each; the roles of the collection render the contents on the
    controller (C(lookup('ansible.builtin.template', ...))) and pass them here.
  - Returns the paths that changed, so that a role can tell which change needs which handler.
  - Where the fact C(file_states) (M(gpuhpc.slurm.host_facts) option C(files), read by site.yml at the start of
    the run) shows every path of the call in place as asked, the action returns unchanged without contacting the
    host (C(host_contacted=false)); the module runs for a path no pattern of that fact covers, for a delegated task, and where there is
    no such fact.
options:
  files:
    description:
      - What to put in place, in order (a folder before the files in it).
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path on the host.
        type: path
        required: true
      state:
        description:
          - V(file) writes O(files[].content) (its folder must exist, so list the folder first); V(directory) makes the
            folder, and its missing parents with the mode of the umask, as M(ansible.builtin.file) does;
            V(absent) removes a file, a link, or a folder and what it holds.
        type: str
        choices: [file, directory, absent]
        default: file
      content:
        description: The file's whole content. Required with O(files[].state=file).
        type: str
      validate:
        description:
          - A command that checks the new content before it replaces the file, with C(%s) for the file to check (a
            temporary file in the same folder), as M(ansible.builtin.copy)'s C(validate). When it fails, the old
            file stays and the module fails with the command's output.
          - Not run in check mode, nor when the content is unchanged.
        type: str
      purge:
        description:
          - With O(files[].state=directory), shell-style patterns of file names, such as C(*.yml). The files of this
            folder that match one and that the call does not list are removed, after every entry is in place (rule
            files a role no longer ships, say).
        type: list
        elements: str
      owner:
        description: Owner (name or uid); the current or default owner when not given.
        type: str
      group:
        description: Group (name or gid); the current or default group when not given.
        type: str
      mode:
        description: Mode as an octal string, such as V('0644').
        type: str
attributes:
  check_mode:
    support: full
    description: Reports what would change, and returns the same fields, and writes nothing.
  diff_mode:
    support: full
    description: Shows each changed path, its content before and after, and its owner, group and mode before and after.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
"""

EXAMPLES = r"""
- name: Slurm's configuration files
  gpuhpc.slurm.config_files:
    files:
      - {path: /etc/slurm, state: directory, owner: root, group: root, mode: "0755"}
      - path: /etc/slurm/slurm.conf
        content: "{{ lookup('ansible.builtin.template', 'slurm.conf.j2') }}"
        owner: root
        group: root
        mode: "0644"
      - {path: /etc/slurm/gres.conf, state: absent}
  register: __files
  notify: Restart slurmd

- name: Rule files, each checked by promtool; the folder keeps no others
  gpuhpc.slurm.config_files:
    files:
      - {path: /etc/prometheus/rules, state: directory, mode: "0755", purge: ["*.yml", "*.yaml"]}
      - path: /etc/prometheus/rules/slurm.yml
        content: "{{ lookup('ansible.builtin.file', 'slurm.yml') }}"
        mode: "0644"
        validate: promtool check rules %s
"""

RETURN = r"""
host_contacted:
  description: False where the run's C(file_states) fact showed everything in place and the host was not contacted.
  type: bool
  returned: when false
changed_paths:
  description: The paths that changed (content, existence, owner, group or mode), in the order given.
  type: list
  elements: str
  returned: always
  sample: [/etc/slurm/slurm.conf]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpuhpc.slurm.plugins.module_utils.files import put, unlisted


def main():
    module = AnsibleModule(
        argument_spec=dict(
            files=dict(type='list', elements='dict', required=True, options=dict(
                path=dict(type='path', required=True),
                state=dict(type='str', choices=['file', 'directory', 'absent'], default='file'),
                content=dict(type='str'),
                validate=dict(type='str'),
                purge=dict(type='list', elements='str'),
                owner=dict(type='str'),
                group=dict(type='str'),
                mode=dict(type='str'),
            )),
        ),
        supports_check_mode=True,
    )
    diffs = []
    changed_paths = []
    for spec in module.params['files']:
        try:
            if put(module, spec, diffs):
                changed_paths.append(spec['path'])
        except (IOError, OSError) as e:
            module.fail_json(msg='%s: %s' % (spec['path'], to_native(e)), changed=bool(changed_paths),
                             changed_paths=changed_paths)
    listed = set(spec['path'] for spec in module.params['files'])
    for spec in module.params['files']:
        if spec.get('purge') and spec.get('state') == 'directory':
            for path in unlisted(spec['path'], spec['purge'], listed):
                if put(module, dict(path=path, state='absent'), diffs):
                    changed_paths.append(path)
    result = dict(changed=bool(changed_paths), changed_paths=changed_paths)
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
