#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sacctmgr_qos
short_description: Slurm QoS through sacctmgr, one or many per call
version_added: 0.1.0
description:
  - Makes Slurm's QoS look as described. Adds missing ones, changes only the
    fields that differ, removes those with O(state=absent) (and with
    O(purge=true) those not listed).
  - One QoS from the top-level options, or many from O(qos).
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
extends_documentation_fragment:
  - gpuhpc.slurm.sacctmgr
  - gpuhpc.slurm.sacctmgr.write
options:
  name:
    description: Name of the QoS (one QoS from the top-level options).
    type: str
  state:
    description: Whether the QoS exists.
    type: str
    default: present
    choices: [present, absent]
  qos:
    description:
      - Many QoS in one call; each item takes the top-level options
        (O(name) required).
    type: list
    elements: dict
  description:
    description: Description.
    type: str
  priority:
    description: Priority factor of the QoS.
    type: int
  flags:
    description: QoS flags, e.g. C(DenyOnLimit).
    type: list
    elements: str
  usage_factor:
    description: Factor applied to the usage of jobs in the QoS.
    type: float
  grp_tres:
    description: TRES limit of all jobs in the QoS together, e.g. C(gres/gpu=16).
    type: raw
  grp_jobs:
    description: Running jobs in the QoS together.
    type: int
  max_tres_per_user:
    description: TRES limit per user, e.g. C(gres/gpu=2).
    type: raw
  max_tres_per_job:
    description: TRES limit per job.
    type: raw
  max_jobs_per_user:
    description: Running jobs per user.
    type: int
  max_submit_jobs_per_user:
    description: Running and pending jobs per user.
    type: int
  max_wall:
    description: Wall-clock limit per job (minutes, C(HH:MM:SS) or C(D-HH:MM:SS); -1 for none).
    type: raw
  preempt:
    description: QoS this one may preempt.
    type: list
    elements: str
'''

EXAMPLES = r'''
- name: GPU QoS with per-user limits
  gpuhpc.slurm.sacctmgr_qos:
    qos:
      - name: gpu-short
        priority: 100
        max_tres_per_user: {gres/gpu: 4}
        max_wall: "04:00:00"
      - name: gpu-long
        max_tres_per_user: gres/gpu=2
        max_wall: 2-00:00:00
        flags: [DenyOnLimit]

- name: Remove one QoS
  gpuhpc.slurm.sacctmgr_qos:
    name: old-qos
    state: absent
'''

RETURN = r'''
changes:
  description: What changed (or would change in check mode), per entity.
  returned: always
  type: list
  elements: dict
  sample: [{kind: qos, name: gpu-short, action: modify, fields: {max_wall: 240}}]
commands:
  description: The sacctmgr write commands, in order (planned in check mode).
  returned: success
  type: list
  elements: str
  sample: ["add qos name=gpu-long,gpu-short maxtresperuser=gres/gpu=2"]
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
  description: The cluster (null for QoS, which are global).
  returned: success
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr


def main():
    module = AnsibleModule(
        argument_spec=dict(sacctmgr.QOS_OPTIONS, qos=dict(type='list', elements='dict'), **sacctmgr.COMMON_OPTIONS),
        mutually_exclusive=[('name', 'qos')],
        required_one_of=[('name', 'qos')],
        supports_check_mode=True,
    )
    qos = sacctmgr.single(module, sacctmgr.QOS_OPTIONS) or sacctmgr.entities(module, 'qos', sacctmgr.QOS_OPTIONS)
    sacctmgr.run(module, qos=qos)


if __name__ == '__main__':
    main()
