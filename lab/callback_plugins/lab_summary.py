# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record what a lab run did (roles applied, per-host counts) as JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: lab_summary
type: aggregate
short_description: Write the roles applied, per-host counts and duration of a run to a JSON file
description:
  - Used by C(make lab) to print its summary and by C(bench/lab.sh) to read the
    changed count of a run. Writes to the file named by E(GPUHPC_LAB_SUMMARY);
    does nothing when that is unset.
requirements:
  - enabled in callbacks_enabled
'''

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'lab_summary'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._roles = []
        self._start = time.time()

    def v2_playbook_on_task_start(self, task, is_conditional):
        role = task._role
        if role is not None and role.get_name() not in self._roles:
            self._roles.append(role.get_name())

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get('GPUHPC_LAB_SUMMARY')
        if not path:
            return
        hosts = dict((h, stats.summarize(h)) for h in sorted(stats.processed))
        with open(path, 'w') as f:
            json.dump({'roles': self._roles, 'hosts': hosts, 'seconds': round(time.time() - self._start, 1)},
                      f, indent=2, sort_keys=True)
