#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: slurm_gpu_usage
short_description: GPU-hours (and billing, and cost) per Slurm account and user for a period
version_added: 0.1.0
description:
  - Sums the GPU-seconds of every job allocation in the window, per account
    and per user and account, from slurmdbd's job records, and renders them
    as CSV, JSON or a markdown table, with a cost when a price per GPU-hour is
    given.
  - "Source: C(sacct -a -D -X -n -P -T -S START -E END). C(-X) reads each job's
    allocation, not its steps; C(-D) every run of a job requeued after
    preemption or a node failure, each with its own time; C(-T) truncates Start
    and End to the window, so a job that crosses the window's edge counts only
    its part inside. The seconds are Slurm's ElapsedRaw (suspended time taken
    off); a running job counts up to now; a job that waited in the window and
    started after it does not count. GPUs are the job's C(gres/gpu) in
    AllocTRES, billing its C(billing) TRES. A requeued job counts once in
    C(jobs)."
  - C(sreport cluster AccountUtilizationByUser -T gres/gpu) gives similar totals
    from the hourly rollups, but rollups exclude the current (unfinished) hour
    and follow the rollup schedule; this module reads the job records instead,
    so recent jobs count at once.
  - Read-only; check mode behaves the same.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
requirements:
  - sacct on the target (a login host or the controller), as a user who may see all jobs
    (root, a Slurm operator, or PrivateData off).
options:
  start:
    description: Start of the window, in sacct's time format (C(2026-11-01), C(2026-11-01T08:00:00), C(now-7days)).
    type: str
    required: true
  end:
    description: End of the window, same format.
    type: str
    default: now
  accounts:
    description: Only these accounts.
    type: list
    elements: str
  users:
    description: Only these users.
    type: list
    elements: str
  cluster:
    description: The cluster (sacct C(-M)); the local one when omitted.
    type: str
  price_per_gpu_hour:
    description: Price of one GPU-hour; adds a C(cost) column.
    type: float
  currency:
    description: Currency shown with the price.
    type: str
    default: ""
  format:
    description: Format of RV(report).
    type: str
    default: markdown
    choices: [csv, json, markdown]
  timeout:
    description: Seconds sacct may take.
    type: int
    default: 120
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Nothing changes.
'''

EXAMPLES = r'''
- name: Last month's GPU-hours per team, priced
  gpuhpc.slurm.slurm_gpu_usage:
    start: "2026-10-01"
    end: "2026-11-01"
    price_per_gpu_hour: 2.5
    currency: EUR
    format: csv
  register: usage

- name: Save it on the Ansible controller
  ansible.builtin.copy:
    content: "{{ usage.report }}"
    dest: reports/gpu-usage-2026-10.csv
    mode: "0644"
  delegate_to: localhost
'''

RETURN = r'''
accounts:
  description: Per account, most GPU-hours first.
  returned: success
  type: list
  elements: dict
  sample: [{account: vision, jobs: 12, gpu_jobs: 10, gpu_seconds: 86400, gpu_hours: 24.0, billing_hours: 96.0, cost: 60.0}]
users:
  description: Per user and account, most GPU-hours first.
  returned: success
  type: list
  elements: dict
  sample: [{user: alice, account: vision, jobs: 4, gpu_jobs: 4, gpu_seconds: 43200, gpu_hours: 12.0}]
total:
  description: The sums over all accounts.
  returned: success
  type: dict
  sample: {jobs: 12, gpu_jobs: 10, gpu_seconds: 86400, gpu_hours: 24.0, billing_hours: 96.0}
window:
  description: The window as given, and the command the numbers come from.
  returned: success
  type: dict
  sample: {start: "2026-10-01", end: "2026-11-01", source: "sacct -a -D -X -n -P -T ..."}
report:
  description: The report in the chosen format.
  returned: success
  type: str
'''

import datetime

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import gpu_usage
from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, check


def main():
    module = AnsibleModule(
        argument_spec=dict(
            start=dict(type='str', required=True),
            end=dict(type='str', default='now'),
            accounts=dict(type='list', elements='str'),
            users=dict(type='list', elements='str'),
            cluster=dict(type='str'),
            price_per_gpu_hour=dict(type='float'),
            currency=dict(type='str', default=''),
            format=dict(type='str', default='markdown', choices=['csv', 'json', 'markdown']),
            timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    p = module.params
    sacct = module.get_bin_path('sacct', required=True)
    args = gpu_usage.sacct_args(p['start'], p['end'], p['cluster'], p['accounts'], p['users'])
    now = datetime.datetime.now()
    try:
        out = check([sacct] + args, p['timeout'], 'sacct ' + ' '.join(args))
    except CommandError as e:
        module.fail_json(msg=e.message, fix='check start/end (sacct time format) and that slurmdbd answers'
                         if e.code == 'failed' else 'check that slurmdbd answers, or raise timeout')
    try:
        accounts, users = gpu_usage.aggregate(out, now)
    except ValueError as e:
        module.fail_json(msg=str(e), fix='report this line: sacct printed what the report does not read')
    by_account, by_user, total = gpu_usage.rows(accounts, users, p['price_per_gpu_hour'])
    window = dict(start=p['start'], end=p['end'], source='sacct ' + ' '.join(args))
    report = gpu_usage.render(p['format'], by_account, by_user, total, window, p['price_per_gpu_hour'],
                              p['currency'])
    module.exit_json(changed=False, accounts=by_account, users=by_user, total=total, window=window, report=report)


if __name__ == '__main__':
    main()
