# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The actions of the modules that put files in place (config_files,
slurm_config, munge_key): the module runs only where the run's file record,
the fact file_states that gpuhpc.slurm.host_facts read at the start of the
run (site.yml's facts play), does not show every file already in place.
Without the record (a role used alone, a delegated task), the module always
runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuhpc.slurm.plugins.module_utils.file_states import all_in_place


class InPlaceAction(ActionBase):
    """Subclasses name their module and say what it would put in place."""

    TRANSFERS_FILES = False
    MODULE = None

    def specs(self, args):
        """The specs (file_states.in_place's form) of what the module would put in place; None: it must run."""
        raise NotImplementedError

    def unchanged(self, args):
        """The module's own result fields for a call that changes nothing."""
        return {}

    def run(self, tmp=None, task_vars=None):
        result = super(InPlaceAction, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        # A delegated task's facts are those of the inventory host, not of the
        # host it runs on.
        states = None if self._task.delegate_to else (task_vars.get('ansible_facts') or {}).get('file_states')
        if states is not None and all_in_place(self.specs(self._task.args), states):
            result.update(changed=False, host_contacted=False, **self.unchanged(self._task.args))
            return result
        result.update(self._execute_module(module_name=self.MODULE, module_args=self._task.args, task_vars=task_vars))
        return result
