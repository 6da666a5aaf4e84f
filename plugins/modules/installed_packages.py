#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: installed_packages
short_description: The installed packages, as the packages fact, from one dpkg or rpm query
version_added: 0.1.0
description:
  - Sets the fact C(packages) in the shape of M(ansible.builtin.package_facts)
    (a package name, then a list of its installed versions), so that what reads
    one reads the other.
  - Reads dpkg's database with C(dpkg-query -W) where C(dpkg-query) is found,
    else rpm's with C(rpm -qa). M(ansible.builtin.package_facts) on Debian
    loads apt's whole cache, every package of every source, to find the
    installed ones; one C(dpkg-query) reads only what is installed, several
    times faster on every host of every run.
  - Changes nothing; check mode reads the same.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
requirements:
  - dpkg-query (Debian, Ubuntu) or rpm (Rocky, RHEL) on the target.
options: {}
notes:
  - A Debian package counts as installed in any state but not-installed and
    config-files, as apt counts it.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
'''

EXAMPLES = r'''
- name: Read the installed packages
  gpuhpc.slurm.installed_packages:

- name: The installed Slurm version
  ansible.builtin.debug:
    msg: "{{ ansible_facts.packages['slurm-wlm-basic-plugins'][0].version }}"
  when: "'slurm-wlm-basic-plugins' in ansible_facts.packages"
'''

RETURN = r'''
ansible_facts:
  description: The fact C(packages).
  returned: success
  type: dict
  contains:
    packages:
      description:
        - Package name -> a list of its installed versions, each with C(name), C(version), C(arch) and
          C(source) (C(apt) or C(rpm)); an rpm package also has C(release) and C(epoch) (an integer, or null).
      type: dict
      sample: {"munge": [{"name": "munge", "version": "0.5.16-1", "arch": "amd64", "source": "apt"}]}
manager:
  description: The package database read, C(dpkg) or C(rpm).
  returned: success
  type: str
  sample: dpkg
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import installed
from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, check


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    if module.get_bin_path('dpkg-query'):
        manager, argv, parse = 'dpkg', installed.DPKG_QUERY, installed.parse_dpkg
    elif module.get_bin_path('rpm'):
        manager, argv, parse = 'rpm', installed.RPM_QUERY, installed.parse_rpm
    else:
        module.fail_json(msg='neither dpkg-query nor rpm is on this host: gpuhpc.slurm.installed_packages reads '
                             'only these package databases', fix='run the collection on Debian, Ubuntu or an EL host')
    try:
        out = check(argv, timeout=120)
    except CommandError as e:
        module.fail_json(msg=e.message, fix='repair the package database (dpkg --audit, rpm --rebuilddb)')
    module.exit_json(changed=False, manager=manager, ansible_facts={'packages': parse(out)})


if __name__ == '__main__':
    main()
