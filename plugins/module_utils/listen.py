# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Listen addresses of the exporters, Alertmanager and Prometheus:
HOST:PORT, [IPv6]:PORT or :PORT (all addresses), as their listen flags take
them; and the address on the host itself where a started service answers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_LISTEN = re.compile(r'^(\[[0-9a-fA-F:]+\]|[^:\[\]\s]*):([0-9]{1,5})$')

# A service that listens on every address answers on the loopback address of
# the same family.
_ANY = {'': '127.0.0.1', '0.0.0.0': '127.0.0.1', '::': '::1'}


def parse(value):
    """(host, port) of a valid listen address, host without brackets; None otherwise."""
    match = _LISTEN.match(str(value))
    if not match or not 1 <= int(match.group(2)) <= 65535:
        return None
    return match.group(1).strip('[]'), int(match.group(2))


def probe(value):
    """{host, port, url_host}: where a wait on the host itself reaches the service
    listening on ``value``; url_host is bracketed for IPv6, as a URL wants it."""
    parsed = parse(value)
    if parsed is None:
        raise ValueError("'%s' is not a listen address (ADDRESS:PORT, [IPv6]:PORT or :PORT)" % value)
    host = _ANY.get(parsed[0], parsed[0])
    return dict(host=host, port=parsed[1], url_host='[%s]' % host if ':' in host else host)
