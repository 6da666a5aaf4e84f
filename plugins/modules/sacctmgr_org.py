#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sacctmgr_org
short_description: A whole Slurm org chart (QoS, accounts, users) through sacctmgr in one call
version_added: 0.1.0
description:
  - What M(gpuhpc.slurm.sacctmgr_qos), M(gpuhpc.slurm.sacctmgr_account) and
    M(gpuhpc.slurm.sacctmgr_user) do, for all three kinds at once. Six
    sacctmgr reads whatever the size, then the writes in a safe order (QoS,
    then accounts parents first, then users; removals in reverse).
  - An unchanged org chart of thousands of users is checked in six sacctmgr
    invocations. Used by the role gpuhpc.slurm.slurm_accounting.
  - The items of O(qos), O(accounts) and O(users) take the options of those
    modules.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - gpuhpc.slurm.sacctmgr
  - gpuhpc.slurm.sacctmgr.write
options:
  qos:
    description: QoS, as the O(gpuhpc.slurm.sacctmgr_qos#module:qos) items.
    type: list
    elements: dict
  accounts:
    description: Accounts, as the O(gpuhpc.slurm.sacctmgr_account#module:accounts) items.
    type: list
    elements: dict
  users:
    description: Users, as the O(gpuhpc.slurm.sacctmgr_user#module:users) items.
    type: list
    elements: dict
'''

EXAMPLES = r'''
- name: The org chart
  gpuhpc.slurm.sacctmgr_org:
    qos:
      - {name: gpu, max_tres_per_user: {gres/gpu: 2}}
    accounts:
      - {name: vision, fairshare: 60, grp_tres: {gres/gpu: 8}, qos: [normal, gpu]}
      - {name: nlp, fairshare: 40, grp_tres: {gres/gpu: 4}, qos: [normal, gpu]}
    users:
      - {name: alice, default_account: vision}
      - {name: bob, default_account: nlp}
'''

RETURN = r'''
changes:
  description: What changed (or would change in check mode), per entity.
  returned: always
  type: list
  elements: dict
  sample: [{kind: user, name: alice, action: add, fields: {accounts: [vision]}}]
commands:
  description: The sacctmgr write commands, in order (planned in check mode).
  returned: success
  type: list
  elements: str
  sample: ["add user name=alice cluster=gpulab account=vision defaultaccount=vision"]
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
  description: The cluster whose associations were managed (null with QoS only).
  returned: success
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr


def main():
    module = AnsibleModule(
        argument_spec=dict(qos=dict(type='list', elements='dict'), accounts=dict(type='list', elements='dict'),
                           users=dict(type='list', elements='dict'), **sacctmgr.COMMON_OPTIONS),
        required_one_of=[('qos', 'accounts', 'users')],
        supports_check_mode=True,
    )
    given = dict((k, sacctmgr.entities(module, k, spec) if module.params[k] is not None else None)
                 for k, spec in (('qos', sacctmgr.QOS_OPTIONS), ('accounts', sacctmgr.ACCOUNT_OPTIONS),
                                 ('users', sacctmgr.USER_OPTIONS)))
    sacctmgr.run(module, **given)


if __name__ == '__main__':
    main()
