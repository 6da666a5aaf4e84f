# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Record what a lab run did (roles applied, per-host counts, seconds per
role, tasks that ran on each host) as JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: lab_summary
type: aggregate
short_description: Write the roles applied, per-host counts and duration of a run to a JSON file
description:
  - Used by C(make lab) to print its summary, by C(bench/lab.sh) to read the
    changed count of a run and by C(bench/scale.sh) for the seconds per role and
    the tasks per host. Writes to the file named by E(GPUHPC_LAB_SUMMARY); does
    nothing when that is unset.
  - Seconds per role are wall time from one task's start to the next one's, as
    C(ansible.posix.profile_roles) counts them; fact gathering counts as
    C(gather_facts), a play's own tasks as C(play).
  - A host's remote tasks are the results that ran a module on that host (not
    skipped, not an action that runs on the controller only, not delegated,
    not a result with C(host_contacted=false), from a file module's action that
    found its files in place by the run's file record).
requirements:
  - enabled in callbacks_enabled
'''

import json
import os
import time

from ansible.plugins.callback import CallbackBase

# Actions that never touch the managed host.
CONTROLLER_ONLY = frozenset('ansible.builtin.' + a for a in (
    'set_fact', 'assert', 'fail', 'debug', 'meta', 'include_vars', 'include_tasks', 'import_tasks',
    'include_role', 'import_role', 'add_host', 'group_by', 'set_stats', 'pause', 'validate_argument_spec',
    'noop'))


def _action(task):
    action = task.action
    return action if '.' in action else 'ansible.builtin.' + action


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'lab_summary'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._roles = []
        self._start = time.time()
        self._seconds = {}
        self._current = None
        self._tasks = {}

    def _close(self):
        if self._current is not None:
            name, since = self._current
            self._seconds[name] = self._seconds.get(name, 0.0) + time.time() - since
            self._current = None

    def _open(self, task):
        self._close()
        role = task._role
        if role is not None:
            name = role.get_name()
            if name not in self._roles:
                self._roles.append(name)
        elif _action(task) in ('ansible.builtin.gather_facts', 'ansible.builtin.setup'):
            name = 'gather_facts'
        else:
            name = 'play'
        self._current = (name, time.time())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._open(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._open(task)

    def _count(self, result, kind):
        host = result._host.get_name()
        counts = self._tasks.setdefault(host, {'remote': 0, 'controller': 0, 'skipped': 0})
        task = result._task
        if kind == 'skipped':
            counts['skipped'] += 1
        elif (_action(task) in CONTROLLER_ONLY or task.delegate_to in ('localhost', '127.0.0.1')
              or result._result.get('host_contacted') is False):
            counts['controller'] += 1
        else:
            counts['remote'] += 1

    def v2_runner_on_ok(self, result):
        self._count(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._count(result, 'skipped')

    def v2_runner_on_unreachable(self, result):
        self._count(result, 'unreachable')

    def v2_playbook_on_stats(self, stats):
        self._close()
        path = os.environ.get('GPUHPC_LAB_SUMMARY')
        if not path:
            return
        hosts = dict((h, stats.summarize(h)) for h in sorted(stats.processed))
        with open(path, 'w') as f:
            json.dump({'roles': self._roles, 'hosts': hosts, 'seconds': round(time.time() - self._start, 1),
                       'role_seconds': dict((k, round(v, 1)) for k, v in self._seconds.items()),
                       'tasks': self._tasks},
                      f, indent=2, sort_keys=True)
