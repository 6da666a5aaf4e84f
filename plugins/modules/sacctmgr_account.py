#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sacctmgr_account
short_description: Slurm accounts and their associations through sacctmgr, one or many per call
version_added: 0.1.0
description:
  - Makes Slurm accounts look as described in one cluster. Adds missing ones
    (parents before children), moves accounts to the parent given, changes
    only the fields that differ, removes those with O(state=absent) (and with
    O(purge=true) those not listed; never C(root)).
  - One account from the top-level options, or a whole tree from O(accounts).
  - QoS named in O(qos) or O(default_qos) must exist; a parent must exist or be listed.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - gpuhpc.slurm.sacctmgr
  - gpuhpc.slurm.sacctmgr.write
  - gpuhpc.slurm.sacctmgr.assoc
options:
  name:
    description: Name of the account (one account from the top-level options).
    type: str
  state:
    description: Whether the account exists (in O(cluster)).
    type: str
    default: present
    choices: [present, absent]
  accounts:
    description:
      - Many accounts in one call; each item takes the top-level options
        (O(name) required).
    type: list
    elements: dict
  parent:
    description: Parent account; C(root) when not given.
    type: str
  description:
    description: Description (Slurm's default is the account name).
    type: str
  organization:
    description: Organization (Slurm's default is the parent's).
    type: str
'''

EXAMPLES = r'''
- name: Two teams, each with a GPU cap
  gpuhpc.slurm.sacctmgr_account:
    accounts:
      - name: research
        fairshare: 100
      - name: vision
        parent: research
        fairshare: 60
        grp_tres: {gres/gpu: 8}
        qos: [normal, gpu-short]
        default_qos: normal
      - name: nlp
        parent: research
        fairshare: 40
        grp_tres: gres/gpu=4
'''

RETURN = r'''
changes:
  description: What changed (or would change in check mode), per entity.
  returned: always
  type: list
  elements: dict
  sample: [{kind: account, name: vision, action: modify, fields: {grp_tres: gres/gpu=8}}]
commands:
  description: The sacctmgr write commands, in order (planned in check mode).
  returned: success
  type: list
  elements: str
  sample: ["modify account where name=vision cluster=gpulab set grptres=gres/gpu=8"]
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
        argument_spec=dict(sacctmgr.ACCOUNT_OPTIONS, accounts=dict(type='list', elements='dict'),
                           **sacctmgr.COMMON_OPTIONS),
        mutually_exclusive=[('name', 'accounts')],
        required_one_of=[('name', 'accounts')],
        supports_check_mode=True,
    )
    accounts = (sacctmgr.single(module, sacctmgr.ACCOUNT_OPTIONS) or
                sacctmgr.entities(module, 'accounts', sacctmgr.ACCOUNT_OPTIONS))
    sacctmgr.run(module, accounts=accounts)


if __name__ == '__main__':
    main()
