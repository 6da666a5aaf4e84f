# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installed packages, read from dpkg's or rpm's database with one query.

The result has the shape of ansible.builtin.package_facts' ``packages`` fact
(a name -> a list of {name, version, arch, source, ...}), so that the
collection's filters read either. package_facts' apt manager loads apt's
whole cache (every package of every source) to find the installed ones;
``dpkg-query -W`` reads only dpkg's status file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch

# One line a package; the fields are tab-separated.
DPKG_QUERY = ['dpkg-query', '-W', '-f', '${db:Status-Abbrev}\\t${Package}\\t${Version}\\t${Architecture}\\n']
RPM_QUERY = ['rpm', '-qa', '--queryformat', '%{NAME}\\t%{EPOCH}\\t%{VERSION}\\t%{RELEASE}\\t%{ARCH}\\n']


def parse_dpkg(text):
    """dpkg-query -W output (DPKG_QUERY's format) -> {name: [{name, version, arch, source}]}.

    A package counts as installed when dpkg has a version of it on disk: any
    state but not-installed ('n') and config-files ('c'), the second letter of
    the status abbreviation, as apt counts it.
    """
    packages = {}
    for line in text.splitlines():
        fields = line.split('\t')
        if len(fields) != 4:
            continue
        status, name, version, arch = fields
        if len(status) < 2 or status[1] in 'nc' or not version:
            continue
        packages.setdefault(name, []).append({'name': name, 'version': version, 'arch': arch, 'source': 'apt'})
    return packages


def parse_rpm(text):
    """rpm -qa output (RPM_QUERY's format) -> {name: [{name, version, release, epoch, arch, source}]}.

    The epoch is an integer, or None where the package has none, as in package_facts.
    """
    packages = {}
    for line in text.splitlines():
        fields = line.split('\t')
        if len(fields) != 5:
            continue
        name, epoch, version, release, arch = fields
        packages.setdefault(name, []).append({
            'name': name, 'version': version, 'release': release,
            'epoch': int(epoch) if epoch.isdigit() else None, 'arch': arch, 'source': 'rpm'})
    return packages


# The service units, loaded or not, and the unit files with their enablement.
SYSTEMCTL_UNITS = ['systemctl', 'list-units', '--type=service', '--all', '--plain', '--no-legend', '--no-pager']
SYSTEMCTL_UNIT_FILES = ['systemctl', 'list-unit-files', '--type=service', '--plain', '--no-legend', '--no-pager']


def unit_patterns(globs):
    """The unit patterns to give SYSTEMCTL_UNITS and SYSTEMCTL_UNIT_FILES, so
    that systemd lists only the units `globs` keep (see matching): [] (all)
    for '*'. list-unit-files reads every unit file on disk to list them all
    (0.2 s on a lab container), and a dozen patterns in 10 ms."""
    globs = [g[:-len('.service')] if g.endswith('.service') else g for g in globs]
    return [] if '*' in globs else [g + '.service' for g in globs]


def parse_services(units, unit_files):
    """systemctl list-units and list-unit-files output (SYSTEMCTL_UNITS, SYSTEMCTL_UNIT_FILES) ->
    {unit: {name, state, status, source}} in the shape of ansible.builtin.service_facts' systemd services.

    ``state`` is ``running`` for a running unit, ``failed``, or ``stopped``
    (service_facts' words); ``status`` is the unit file's state (``enabled``,
    ``disabled``, ``static``, ...); for a loaded unit without a file of its own
    (an instance of a template) its activity, and ``not-found`` where systemd
    has no unit. A unit file that is not loaded is ``inactive``, a template
    (``name@.service``) ``unknown``.
    Both as service_facts has them, but for aliases (service_facts asks again
    for each; the collection reads units by their own names).
    """
    status = {}
    for line in unit_files.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].endswith('.service'):
            status[fields[0]] = fields[1]
    services = {}
    for line in units.splitlines():
        fields = line.split(None, 4)
        # UNIT LOAD ACTIVE SUB DESCRIPTION; a unit that failed to load is marked with a leading bullet.
        if fields and fields[0] in ('*', '\u25cf'):
            fields = fields[1:]
        if len(fields) < 4 or not fields[0].endswith('.service'):
            continue
        unit, load, active, sub = fields[:4]
        state = 'running' if sub == 'running' else 'failed' if active == 'failed' else 'stopped'
        unit_status = status.get(unit, 'not-found' if load == 'not-found' else active)
        services[unit] = {'name': unit, 'state': state, 'status': unit_status, 'source': 'systemd'}
    for unit, unit_status in status.items():
        state = 'unknown' if unit.endswith('@.service') else 'inactive'
        services.setdefault(unit, {'name': unit, 'state': state, 'status': unit_status, 'source': 'systemd'})
    return services


def matching(facts, globs):
    """The entries of `facts` (packages or services) whose names match one of
    the shell-style `globs`; for a unit, with or without ``.service``. Fewer
    facts make every later task of the run cheaper: Ansible copies a host's
    facts for each task it runs there."""
    globs = [g[:-len('.service')] if g.endswith('.service') else g for g in globs]
    if '*' in globs:
        return facts
    return dict((k, v) for k, v in facts.items()
                if any(fnmatch.fnmatchcase(k[:-len('.service')] if k.endswith('.service') else k, g) for g in globs))


# The TCP sockets of the host's network namespace (IPv4 and IPv6).
PROC_NET_TCP = ('/proc/net/tcp', '/proc/net/tcp6')


def parse_tcp_listening(texts):
    """/proc/net/tcp and /proc/net/tcp6 contents -> the sorted TCP ports that a
    socket listens on (state 0A), on any address."""
    ports = set()
    for text in texts:
        for line in text.splitlines()[1:]:
            fields = line.split()
            if len(fields) > 3 and fields[3] == '0A' and ':' in fields[1]:
                ports.add(int(fields[1].rsplit(':', 1)[1], 16))
    return sorted(ports)
