# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja tests used by the roles' preflight checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# HOST:PORT, [IPv6]:PORT or :PORT (all addresses), as the exporters and
# Prometheus take for their listen flag.
_LISTEN = re.compile(r'^(\[[0-9a-fA-F:]+\]|[^:\[\]\s]*):([0-9]{1,5})$')


def listen_address(value):
    """True when ``value`` is [ADDRESS]:PORT with a port from 1 to 65535."""
    match = _LISTEN.match(str(value))
    return bool(match) and 1 <= int(match.group(2)) <= 65535


class TestModule(object):
    def tests(self):
        return {'listen_address': listen_address}
