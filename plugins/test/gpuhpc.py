# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja tests used by the roles' preflight checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuhpc.slurm.plugins.module_utils.listen import parse


def listen_address(value):
    """True when ``value`` is [ADDRESS]:PORT with a port from 1 to 65535."""
    return parse(value) is not None


class TestModule(object):
    def tests(self):
        return {'listen_address': listen_address}
