#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sacctmgr_user
short_description: Slurm users and their associations through sacctmgr, one or many per call
version_added: 0.1.0
description:
  - Makes Slurm users look as described in one cluster. Adds missing users and
    associations, changes the default account, admin level and association
    fields that differ, removes associations with accounts no longer listed
    (when O(accounts) is given), removes users with O(state=absent) (and with
    O(purge=true) those not listed; never C(root)).
  - Thousands of users cost a handful of sacctmgr invocations, as users that need
    the same change share one command.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - gpuhpc.slurm.sacctmgr
  - gpuhpc.slurm.sacctmgr.write
  - gpuhpc.slurm.sacctmgr.assoc
options:
  name:
    description: Login name of the user (one user from the top-level options).
    type: str
  state:
    description:
      - Whether the user exists. V(absent) removes the user and their associations only
        (with O(accounts), only the associations with those accounts).
    type: str
    default: present
    choices: [present, absent]
  users:
    description:
      - Many users in one call; each item takes the top-level options
        (O(name) required).
    type: list
    elements: dict
  default_account:
    description: The account jobs are charged to by default. Required with O(state=present).
    type: str
  accounts:
    description:
      - Other accounts the user may charge. When given, associations with accounts not
        listed (other than O(default_account)) are removed; when omitted they are kept.
    type: list
    elements: str
  admin_level:
    description: Slurm administration level.
    type: str
    choices: [none, operator, administrator]
'''

EXAMPLES = r'''
- name: Users of two teams
  gpuhpc.slurm.sacctmgr_user:
    users:
      - {name: alice, default_account: vision}
      - {name: bob, default_account: nlp, accounts: [vision], max_jobs: 10}
      - {name: carol, default_account: vision, admin_level: operator}

- name: Remove a user (their associations only)
  gpuhpc.slurm.sacctmgr_user:
    name: dave
    state: absent
'''

RETURN = r'''
changes:
  description: What changed (or would change in check mode), per entity.
  returned: always
  type: list
  elements: dict
  sample: [{kind: user, name: bob, action: modify, fields: {accounts: [nlp, vision]}}]
commands:
  description: The sacctmgr write commands, in order (planned in check mode).
  returned: success
  type: list
  elements: str
  sample: ["add user name=alice,carol cluster=gpulab account=vision defaultaccount=vision"]
sacctmgr_calls:
  description: sacctmgr invocations, reads and writes.
  returned: always
  type: int
  sample: 2
applied:
  description: On a failure half-way, the commands that were applied.
  returned: failure
  type: list
  elements: str
not_applied:
  description: On a failure half-way, the commands that were not.
  returned: failure
  type: list
  elements: str
code:
  description: On failure, what went wrong (C(slurmdbd_unreachable), C(unknown_tres), C(bad_value), ...).
  returned: failure
  type: str
cluster:
  description: The cluster whose associations were managed.
  returned: success
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr


def main():
    module = AnsibleModule(
        argument_spec=dict(sacctmgr.USER_OPTIONS, users=dict(type='list', elements='dict'), **sacctmgr.COMMON_OPTIONS),
        mutually_exclusive=[('name', 'users')],
        required_one_of=[('name', 'users')],
        supports_check_mode=True,
    )
    users = sacctmgr.single(module, sacctmgr.USER_OPTIONS) or sacctmgr.entities(module, 'users', sacctmgr.USER_OPTIONS)
    sacctmgr.run(module, users=users)


if __name__ == '__main__':
    main()
