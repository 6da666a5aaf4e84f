#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: host_facts
short_description: The installed packages, the systemd services and a subset of Ansible's facts, in one call
version_added: 0.1.0
description:
  - One round trip for the facts that a run reads, where M(ansible.builtin.setup) and
    M(ansible.builtin.package_facts) and M(ansible.builtin.service_facts) take three.
  - Sets the fact C(packages) in the shape of M(ansible.builtin.package_facts)
    (a package name, then a list of its installed versions), and the fact
    C(services) in the shape of M(ansible.builtin.service_facts) (a unit, then
    its state and its unit file's status), so that what reads one reads the other.
  - Reads dpkg's database with C(dpkg-query -W) where C(dpkg-query) is found,
    else rpm's with C(rpm -qa). M(ansible.builtin.package_facts) on Debian
    loads apt's whole cache, every package of every source, to find the
    installed ones; one C(dpkg-query) reads only what is installed.
  - Reads the services with C(systemctl list-units) and C(systemctl
    list-unit-files). M(ansible.builtin.service_facts) also asks every SysV
    script; the collection's services are systemd units.
  - The roles read them to skip what is in place already (an install, a start),
    so that a rerun that changes nothing costs fewer round trips.
  - Changes nothing; check mode reads the same.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
requirements:
  - dpkg-query (Debian, Ubuntu) or rpm (Rocky, RHEL) on the target; systemctl for O(gather=services).
options:
  gather:
    description:
      - What to read.
      - V(cpu_memory) reads the processor and memory facts of M(ansible.builtin.setup)'s C(hardware) subset
        (C(ansible_processor_vcpus), C(ansible_memtotal_mb), ...), as setup computes them, without the rest of that
        subset (mounts, block devices, DMI, LVM), which can take seconds on a host with many of them. Linux only.
      - V(ports) reads the TCP ports that a socket listens on (C(/proc/net/tcp), C(tcp6)), so that a role need not
        wait for a port that was open before the run and that nothing restarted since. Linux only.
    type: list
    elements: str
    choices: [packages, services, cpu_memory, ports]
    default: [packages, services]
  gather_subset:
    description:
      - Ansible's own facts, read as M(ansible.builtin.setup) reads them with the same O(gather_subset)
        (e.g. C(['!all', '!min', 'distribution', 'hardware'])), and set under the same names.
      - None by default.
    type: list
    elements: str
    default: []
  filter:
    description:
      - Shell-style patterns of the names of O(gather_subset)'s facts to keep, as M(ansible.builtin.setup)'s
        C(filter) (e.g. C(ansible_distribution*)); all by default.
      - Applies to the facts of O(gather=cpu_memory) too.
      - The hardware subset names every processor, mount and device; Ansible copies a host's facts for every task
        it runs there, so a short list makes a run with many tasks cheaper.
    type: list
    elements: str
    default: []
  paths:
    description:
      - Shell-style patterns of absolute paths (C(/etc/gpuhpc/web/*)) whose existing matches to report in the fact
        C(paths); none by default.
      - A role skips a round trip where the facts show that there is nothing to remove or nothing to look at.
    type: list
    elements: path
    default: []
  files:
    description:
      - Shell-style patterns of absolute paths (glob's rules) of the files and folders the roles manage. Each
        existing match is reported in the fact C(file_states) with its kind, owner, group, mode and, for a file
        of up to 1 MiB, the SHA-256 of its content; none by default.
      - A pattern that starts with C(!) leaves out what it matches, such as a file that holds a password (its
        unsalted SHA-256 would let whoever reads the facts try guesses).
      - M(gpuhpc.slurm.config_files) compares its files with this fact and contacts the host only where one
        differs, or where no pattern covers its path. The fact is read at the start of the run (site.yml's
        facts play), so a file changed by hand after that is found by the next run.
    type: list
    elements: path
    default: []
  packages:
    description:
      - Shell-style patterns of the package names to keep; C(*) keeps all.
      - Ansible copies a host's facts for every task it runs there, so a short list makes a run with many tasks
        cheaper; site.yml keeps the collection's packages only.
    type: list
    elements: str
    default: ['*']
  services:
    description:
      - Shell-style patterns of the units to keep, with or without C(.service); C(*) keeps all.
      - Other patterns are passed to C(systemctl), which then reads only the unit files they name (C(list-unit-files)
        reads every unit file on disk otherwise).
    type: list
    elements: str
    default: ['*']
notes:
  - A Debian package counts as installed in any state but not-installed and
    config-files, as apt counts it.
  - An alias unit has the state of its file (C(inactive)), not of the unit it names.
attributes:
  check_mode:
    support: full
    description: Reads the same in check mode; it never changes anything.
  diff_mode:
    support: none
    description: Nothing changes, so there is no difference to show.
'''

EXAMPLES = r'''
- name: Read the installed packages and the services
  gpuhpc.slurm.host_facts:

- name: The installed Slurm version
  ansible.builtin.debug:
    msg: "{{ ansible_facts.packages['slurm-wlm-basic-plugins'][0].version }}"
  when: "'slurm-wlm-basic-plugins' in ansible_facts.packages"

- name: Read the installed packages again after an install
  gpuhpc.slurm.host_facts:
    gather: [packages]

- name: The distribution and the hardware too, in the same round trip
  gpuhpc.slurm.host_facts:
    gather_subset: ['!all', '!min', distribution, hardware]

- name: Of the hardware, the memory and the processor counts only
  gpuhpc.slurm.host_facts:
    gather: [cpu_memory]
    gather_subset: ['!all', '!min', platform]
    filter: [ansible_architecture, ansible_memtotal_mb, 'ansible_processor_*']

- name: Whether the NVIDIA driver is loaded, and which web config folders there are
  gpuhpc.slurm.host_facts:
    gather: []
    paths: [/proc/driver/nvidia/version, /etc/gpuhpc/web/*]

- name: Only Slurm's and munge's packages and services
  gpuhpc.slurm.host_facts:
    packages: ['slurm*', 'libslurm*', munge]
    services: ['slurm*', munge]
'''

RETURN = r'''
ansible_facts:
  description:
    - The facts C(packages) and C(services), and the processor and memory facts, as O(gather) asks, and those of
      O(gather_subset) (see M(ansible.builtin.setup)).
  returned: success
  type: dict
  contains:
    packages:
      description:
        - Package name -> a list of its installed versions, each with C(name), C(version), C(arch) and
          C(source) (C(apt) or C(rpm)); an rpm package also has C(release) and C(epoch) (an integer, or null).
      type: dict
      returned: when O(gather) has C(packages)
      sample: {"munge": [{"name": "munge", "version": "0.5.16-1", "arch": "amd64", "source": "apt"}]}
    tcp_listening:
      description: The TCP ports that a socket listens on, on any address, sorted.
      type: list
      elements: int
      returned: when O(gather) has C(ports)
      sample: [22, 6818, 9100]
    services:
      description:
        - Unit name -> C(name), C(state) (C(running), C(stopped), C(failed), C(inactive) or C(unknown)),
          C(status) (the unit file's state, e.g. C(enabled)) and C(source) (C(systemd)).
      type: dict
      returned: when O(gather) has C(services)
      sample: {"munge.service": {"name": "munge.service", "state": "running", "status": "enabled", "source": "systemd"}}
    paths:
      description:
        - Each pattern of O(paths), then the sorted list of the paths that match it and exist (empty when none
          does).
      type: dict
      returned: when O(paths) is not empty
      sample: {"/etc/gpuhpc/web/*": ["/etc/gpuhpc/web/node_exporter"], "/proc/driver/nvidia/version": []}
    file_states:
      description:
        - C(patterns), the patterns of O(files); C(paths), each existing match -> C(state) (C(file),
          C(directory), C(link) or C(other)), C(mode) (octal string), C(owner), C(group), C(uid), C(gid) and,
          for a file of up to 1 MiB, C(sha256).
      type: dict
      returned: when O(files) is not empty
      sample: {"patterns": ["/etc/default/munge"], "paths": {"/etc/default/munge": {"state": "file", "mode": "0644",
               "owner": "root", "group": "root", "uid": 0, "gid": 0, "sha256": "9f86d08..."}}}
manager:
  description: The package database read, C(dpkg) or C(rpm).
  returned: when O(gather) has C(packages)
  type: str
  sample: dpkg
'''

import fnmatch
import glob

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.locale import get_best_parsable_locale
from ansible.module_utils.facts import ansible_collector, default_collectors
from ansible.module_utils.facts.collector import CollectorNotFoundError
from ansible.module_utils.facts.hardware.linux import LinuxHardware
from ansible.module_utils.facts.namespace import PrefixFactNamespace
from ansible_collections.gpuhpc.slurm.plugins.module_utils import file_states, installed
from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, check


# What setup reads of gather_subset's 'min' (ansible.builtin.setup's own list).
MINIMAL_GATHER_SUBSET = frozenset(['apparmor', 'caps', 'cmdline', 'date_time', 'distribution', 'dns', 'env',
                                   'fips', 'local', 'lsb', 'pkg_mgr', 'platform', 'python', 'selinux',
                                   'service_mgr', 'ssh_pub_keys', 'user'])


def ansible_facts(module, gather_subset, filter_spec):
    """Ansible's facts of gather_subset whose names match filter_spec (all when
    empty), named as ansible.builtin.setup names them."""
    try:
        collector = ansible_collector.get_ansible_collector(
            all_collector_classes=default_collectors.collectors,
            namespace=PrefixFactNamespace(namespace_name='ansible', prefix='ansible_'),
            filter_spec=filter_spec, gather_subset=gather_subset, gather_timeout=10, minimal_gather_subset=MINIMAL_GATHER_SUBSET)
    except (TypeError, CollectorNotFoundError) as e:
        module.fail_json(msg='gather_subset %s: %s' % (gather_subset, e),
                         fix="name subsets as ansible.builtin.setup's gather_subset does")
    return collector.collect(module=module)


def systemctl(argv):
    """systemctl's list; '' where it names patterns and no unit matches them
    (systemd 252 and 257 exit 1 then, and print nothing)."""
    try:
        return check(argv, timeout=60)
    except CommandError as e:
        if e.rc == 1 and not e.stdout.strip() and not e.stderr.strip():
            return ''
        raise


def read_text(path):
    """A file's text; '' where there is none (no IPv6)."""
    try:
        with open(path) as f:
            return f.read()
    except (IOError, OSError):
        return ''


def cpu_memory(module, collected, filter_spec):
    """The processor and memory facts of setup's hardware subset, computed
    as setup computes them (collected: the facts read so far, whose
    architecture picks how /proc/cpuinfo is read), named as setup names them."""
    locale = get_best_parsable_locale(module)
    module.run_command_environ_update = {'LANG': locale, 'LC_ALL': locale, 'LC_NUMERIC': locale}
    hardware = LinuxHardware(module)
    found = dict(hardware.get_cpu_facts(collected_facts=collected), **hardware.get_memory_facts())
    return dict(('ansible_' + name, value) for name, value in found.items()
                if not filter_spec or any(fnmatch.fnmatchcase('ansible_' + name, p) for p in filter_spec))


def main():
    module = AnsibleModule(
        argument_spec=dict(gather=dict(type='list', elements='str', choices=['packages', 'services', 'cpu_memory', 'ports'],
                                       default=['packages', 'services']),
                           gather_subset=dict(type='list', elements='str', default=[]),
                           filter=dict(type='list', elements='str', default=[]),
                           paths=dict(type='list', elements='path', default=[]),
                           files=dict(type='list', elements='path', default=[]),
                           packages=dict(type='list', elements='str', default=['*']),
                           services=dict(type='list', elements='str', default=['*'])),
        supports_check_mode=True)
    gather = module.params['gather']
    facts, result = {}, {}
    if module.params['gather_subset']:
        facts.update(ansible_facts(module, module.params['gather_subset'], module.params['filter']))
    if 'ports' in gather:
        facts['tcp_listening'] = installed.parse_tcp_listening(read_text(p) for p in installed.PROC_NET_TCP)
    if 'cpu_memory' in gather:
        facts.update(cpu_memory(module, facts, module.params['filter']))
    for option in ('paths', 'files'):
        relative = [p for p in module.params[option] if not p.lstrip('!').startswith('/')]
        if relative:
            module.fail_json(msg='%s: %s not absolute' % (option, ', '.join(relative)), fix='give each pattern from /')
    if module.params['paths']:
        facts['paths'] = dict((pattern, sorted(glob.glob(pattern))) for pattern in module.params['paths'])
    if module.params['files']:
        facts['file_states'] = file_states.read(module.params['files'])
    try:
        if 'packages' in gather:
            if module.get_bin_path('dpkg-query'):
                manager, argv, parse = 'dpkg', installed.DPKG_QUERY, installed.parse_dpkg
            elif module.get_bin_path('rpm'):
                manager, argv, parse = 'rpm', installed.RPM_QUERY, installed.parse_rpm
            else:
                module.fail_json(msg='neither dpkg-query nor rpm is on this host: gpuhpc.slurm.host_facts reads '
                                     'only these package databases', fix='run the collection on Debian, Ubuntu or an EL host')
            facts['packages'] = installed.matching(parse(check(argv, timeout=120)), module.params['packages'])
            result['manager'] = manager
        if 'services' in gather:
            patterns = installed.unit_patterns(module.params['services'])
            services = installed.parse_services(systemctl(installed.SYSTEMCTL_UNITS + patterns),
                                                systemctl(installed.SYSTEMCTL_UNIT_FILES + patterns))
            facts['services'] = installed.matching(services, module.params['services'])
    except CommandError as e:
        module.fail_json(msg=e.message, fix='see why the command failed on the host (package database, systemd)')
    module.exit_json(changed=False, ansible_facts=facts, **result)


if __name__ == '__main__':
    main()
