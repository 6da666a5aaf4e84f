# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action: gpuhpc.slurm.munge_key, without a round trip where a key is
given and the run's file record shows it in place (plugin_utils/in_place.py).
The record holds the key file's SHA-256, never the key."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

from ansible_collections.gpuhpc.slurm.plugins.module_utils.munge import MungeKeyError, decode_key
from ansible_collections.gpuhpc.slurm.plugins.plugin_utils.in_place import InPlaceAction


class ActionModule(InPlaceAction):
    MODULE = 'gpuhpc.slurm.munge_key'

    def specs(self, args):
        # No key: the module makes one where none is (and checks the one there).
        if not args.get('key'):
            return None
        try:
            key = decode_key(args['key'], 'key')
        except MungeKeyError:
            return None  # the module says what is wrong with it
        return [dict(path=args.get('path', '/etc/munge/munge.key'), sha256=hashlib.sha256(key).hexdigest(),
                     owner=args.get('owner'), group=args.get('group'), mode=args.get('mode'))]
