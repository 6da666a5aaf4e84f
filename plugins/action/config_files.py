# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action: gpuhpc.slurm.config_files, without a round trip where the run's
file record shows every file and folder in place (plugin_utils/in_place.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuhpc.slurm.plugins.plugin_utils.in_place import InPlaceAction


class ActionModule(InPlaceAction):
    MODULE = 'gpuhpc.slurm.config_files'

    def specs(self, args):
        return args.get('files')

    def unchanged(self, args):
        return dict(changed_paths=[])
