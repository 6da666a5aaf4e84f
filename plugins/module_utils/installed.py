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
