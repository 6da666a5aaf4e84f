# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action: gpuhpc.slurm.slurm_config, without a round trip where the run's
file record shows every file in place (plugin_utils/in_place.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

from ansible_collections.gpuhpc.slurm.plugins.plugin_utils.in_place import InPlaceAction


class ActionModule(InPlaceAction):
    MODULE = 'gpuhpc.slurm.slurm_config'

    def specs(self, args):
        # What the module puts in place, with its defaults (plugins/modules/slurm_config.py).
        folder, files = args.get('dir'), args.get('files')
        if not isinstance(folder, str) or not isinstance(files, dict) or any('/' in str(n) for n in files):
            return None
        specs = []
        if any(content is not None for content in files.values()):
            specs.append(dict(path=folder, state='directory', owner='root', group='root', mode='0755'))
        for name, content in sorted(files.items()):
            path = posixpath.join(folder, name)
            if content is None:
                specs.append(dict(path=path, state='absent'))
            else:
                specs.append(dict(path=path, content=content, owner=args.get('owner', 'root'),
                                  group=args.get('group', 'root'), mode=args.get('mode', '0644')))
        return specs

    def unchanged(self, args):
        return dict(changed_files=[], keys=[], restart=False)
