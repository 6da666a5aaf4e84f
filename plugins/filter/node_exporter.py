# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of gpuhpc.slurm.node_exporter's input that its argument spec
cannot express, as one list of problems (the role's preflight fails on it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuhpc.slurm.plugins.module_utils.listen import parse

_FLAG = re.compile(r'--[a-zA-Z]')
_COLLECTOR_FLAG = re.compile(r'--(no-)?collector[.][a-z0-9_]+$')


def _absolute(value):
    return str(value).startswith('/')


def node_exporter_problems(settings, known_collectors, always_on, managed_flags):
    """Messages naming the variable and the fix; [] for good input.

    settings: the role's variables without the node_exporter_ prefix
    (listen_address, textfile_dir,
    collectors_enabled, collectors_disabled, extra_args)."""
    s = settings
    problems = []
    if parse(s['listen_address']) is None:
        problems.append("node_exporter_listen_address '%s' is not ADDRESS:PORT with a port from 1 to 65535 "
                        "(e.g. 0.0.0.0:9100 or [::]:9100)" % s['listen_address'])
    if not _absolute(s['textfile_dir']):
        problems.append("node_exporter_textfile_dir '%s' is not an absolute path" % s['textfile_dir'])
    for name in ('collectors_enabled', 'collectors_disabled'):
        unknown = [c for c in s[name] if c not in known_collectors]
        if unknown:
            problems.append("node_exporter_%s names '%s', which node_exporter does not have; known collectors: %s"
                            % (name, "', '".join(unknown), ', '.join(sorted(known_collectors))))
    both = [c for c in s['collectors_enabled'] if c in s['collectors_disabled']]
    if both:
        problems.append("node_exporter_collectors_enabled and node_exporter_collectors_disabled both name '%s': "
                        "keep each collector in one list" % "', '".join(both))
    off = [c for c in s['collectors_disabled'] if c in always_on]
    if off:
        problems.append("node_exporter_collectors_disabled names '%s': the role always runs the systemd and textfile "
                        "collectors (unit states; node_exporter_textfile_dir)" % "', '".join(off))
    for arg in s['extra_args']:
        flag = re.sub('=.*$', '', str(arg))
        if not _FLAG.match(str(arg)):
            problems.append("node_exporter_extra_args: '%s' is not a flag (--name or --name=value)" % arg)
        elif flag in managed_flags:
            problems.append("node_exporter_extra_args: '%s' sets %s, which the role sets from %s: use that instead"
                            % (arg, flag, managed_flags[flag]))
        elif _COLLECTOR_FLAG.match(str(arg)):
            problems.append("node_exporter_extra_args: '%s' switches a collector: list it in "
                            "node_exporter_collectors_enabled or node_exporter_collectors_disabled instead" % arg)
    return problems


class FilterModule(object):
    def filters(self):
        return {'node_exporter_problems': node_exporter_problems}
