#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sacctmgr_info
short_description: Read Slurm's QoS, accounts and users from sacctmgr
version_added: 0.1.0
description:
  - Reads what slurmdbd holds, in at most six sacctmgr invocations, with the
    values normalised as the sacctmgr modules compare them (memory in MB,
    durations in minutes, lists sorted; limits not set are left out).
  - Association limits are the association's own (C(WOPLimits)), not the
    ones inherited from parents.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - gpuhpc.slurm.sacctmgr
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Nothing changes.
'''

EXAMPLES = r'''
- name: Read the accounting setup
  gpuhpc.slurm.sacctmgr_info:
  register: slurm_accounting

- name: Show the GPU cap of team vision
  ansible.builtin.debug:
    msg: "{{ slurm_accounting.accounts.vision.grp_tres | default('none') }}"
'''

RETURN = r'''
cluster:
  description: The cluster read.
  returned: success
  type: str
  sample: gpulab
qos:
  description: Each QoS with the fields set on it.
  returned: success
  type: dict
  sample: {normal: {priority: 0}, gpu: {max_tres_per_user: gres/gpu=2, max_wall: 2880}}
accounts:
  description: Each account of the cluster with its parent, description, organization and own association fields.
  returned: success
  type: dict
  sample: {vision: {parent: root, description: vision, organization: research, fairshare: 60, grp_tres: gres/gpu=8}}
users:
  description: Each user with the default account, admin level and own association fields per account.
  returned: success
  type: dict
  sample: {alice: {default_account: vision, admin_level: none, accounts: {vision: {fairshare: 1}}}}
sacctmgr_calls:
  description: sacctmgr invocations.
  returned: always
  type: int
  sample: 5
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr


def main():
    module = AnsibleModule(argument_spec=sacctmgr.INFO_OPTIONS, supports_check_mode=True)
    sacctmgr.info(module)


if __name__ == '__main__':
    main()
