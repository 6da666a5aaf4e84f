# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the Slurm packages come from: an apt source and the apt preferences
that pin the Slurm packages to one version (slurm role variables
slurm_package_repository, slurm_package_version, slurm_package_repository_packages)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

# The binary packages of Debian's slurm-wlm source, as apt preferences globs.
# (libpmi0 and libpmi2-0 are Slurm's; libpmix* is OpenPMIx, another source.)
SLURM_PACKAGE_GLOBS = ('slurm*', 'libslurm*', 'libpmi0*', 'libpmi2-*', 'libnss-slurm', 'libpam-slurm*', 'sview')
# The same globs, for the names of installed packages.
SLURM_PACKAGE_RE = re.compile('|'.join(fnmatch.translate(glob) for glob in SLURM_PACKAGE_GLOBS))

SOURCE_FILE = '/etc/apt/sources.list.d/gpuhpc-slurm.list'
PREFERENCES_FILE = '/etc/apt/preferences.d/gpuhpc-slurm'

# A Debian version: [epoch:]upstream[-revision], no spaces.
VERSION_RE = re.compile(r'^([0-9]+:)?[0-9][A-Za-z0-9.+~:-]*$')
# Suites that are archive names (Suite: in a Release file) rather than codenames.
ARCHIVE_NAMES = ('stable', 'testing', 'unstable', 'oldstable', 'oldoldstable', 'experimental',
                 'stable-backports', 'stable-updates', 'proposed-updates')


def parse_source(line):
    """'deb [opts] URI SUITE [COMPONENT...]' -> (uri, suite); None when it is not such a line."""
    m = re.match(r'^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)(?:\s+\S+)*\s*$', line or '')
    if not m:
        return None
    return m.group(1), m.group(2)


def release_pin(line):
    """The apt preferences 'Pin:' value that selects the packages of the source `line`."""
    uri, suite = parse_source(line)
    if suite.endswith('/'):  # a flat repository: select it by its host ("" for local files)
        host = '' if re.match(r'^(file|copy):', uri) else re.sub(r'^[a-z+]+://', '', uri).split('/', 1)[0]
        return 'origin "%s"' % host
    return 'release %s=%s' % ('a' if suite in ARCHIVE_NAMES else 'n', suite)


def source_problems(repository, version, packages, os_family):
    """What is wrong with the package-source variables, one message each
    (os_family '' where the facts are not known yet)."""
    problems = []
    if (repository or version or packages) and os_family not in ('Debian', ''):
        problems.append('slurm_package_repository, slurm_package_version and slurm_package_repository_packages '
                        'are written as apt sources and preferences, and this host is %s: set up the '
                        'repository and the version lock with your own tasks, and leave these empty' % os_family)
        return problems
    if repository and parse_source(repository) is None:
        problems.append("slurm_package_repository '%s' is not an apt source line: give one such as "
                        "'deb http://deb.debian.org/debian sid main' (or "
                        "'deb [trusted=yes] file:/srv/slurm ./' for local package files)" % repository)
    if version and not VERSION_RE.match(str(version)):
        problems.append("slurm_package_version '%s' is not a package version: give the full Debian version, "
                        "e.g. '26.05.5-1' (apt-cache policy slurm-client lists them)" % version)
    if packages and not repository:
        problems.append('slurm_package_repository_packages is set and slurm_package_repository is empty: '
                        'name the repository those packages come from, or empty the list')
    return problems


def apt_files(repository, version, packages):
    """{path: content} of the apt source and preferences; {} when nothing is pinned."""
    files = {}
    records = []
    if version:
        globs = ' '.join(SLURM_PACKAGE_GLOBS)
        records.append('Package: %s\nPin: version %s\nPin-Priority: 1001\n' % (globs, version))
        # a binary-only rebuild (binNMU) of the same version
        records.append('Package: %s\nPin: version %s+b*\nPin-Priority: 1001\n' % (globs, version))
    if repository:
        files[SOURCE_FILE] = '# gpuhpc.slurm: slurm_package_repository\n%s\n' % repository.strip()
        pin = release_pin(repository)
        if packages:
            records.append('Package: %s\nPin: %s\nPin-Priority: 990\n' % (' '.join(packages), pin))
        # everything else in that repository only where nothing else has it
        records.append('Package: *\nPin: %s\nPin-Priority: 100\n' % pin)
    if records:
        files[PREFERENCES_FILE] = ('# gpuhpc.slurm: slurm_package_version, slurm_package_repository(_packages)\n'
                                   + '\n'.join(records))
    return files


def installed_slurm_packages(packages):
    """The names of the Slurm packages in ansible_facts.packages, sorted."""
    return sorted(name for name in (packages or {}) if SLURM_PACKAGE_RE.match(name))


def at_version(installed, version):
    """Whether an installed package version is `version` (or its binary-only rebuild)."""
    return installed == version or installed.startswith(version + '+b')


def packages_behind(packages, version):
    """'name installed-version' of each Slurm package in ansible_facts.packages not at `version`."""
    behind = []
    for name in installed_slurm_packages(packages):
        versions = [str(p.get('version', '')) for p in packages[name]]
        if not any(at_version(v, version) for v in versions):
            behind.append('%s %s' % (name, ','.join(versions)))
    return behind
