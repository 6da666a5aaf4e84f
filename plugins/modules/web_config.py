#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of the web_config action (plugins/action/web_config.py): it runs on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: web_config
short_description: One endpoint's TLS certificate and basic auth, made on the controller, put on the host
version_added: 0.1.0
description:
  - An action that runs on the Ansible controller. With O(state=present) it makes (once) a CA, or uses the site's, and a
    certificate for the host signed by it, for the inventory name and O(names), in O(pki_dir); hashes O(password) with
    bcrypt (a salt derived from the host and user names, so that a rerun writes the same file); and writes C(ca.pem),
    C(cert.pem), C(key.pem) and exporter-toolkit's C(web-config.yml) into O(folder) on the host, with
    M(gpuhpc.slurm.config_files), in one call that logs nothing on the host and shows no diff.
  - O(state=absent) removes O(folder). O(state=ca) returns the CA's certificate only and writes nothing on the host.
  - A host certificate is made again when its names or the CA change, or when it has less than 30 days left
    (unless it ends with the site's CA, which a new one could not outlive).
  - The private CA is renewed, with the same key and name, once a host certificate made now would outlive
    it; the certificates it signed stay valid, none is made again for it.
  - Used by the role gpuhpc.slurm.web_config; its README says how.
options:
  folder:
    description: The endpoint's folder on the host (absolute). Required unless O(state=ca).
    type: path
  group:
    description: The group the service reads its key and web config as. Required with O(state=present).
    type: str
  state:
    description: What to do.
    type: str
    choices: [present, absent, ca]
    default: present
  username:
    description: The basic auth user.
    type: str
    default: prometheus
  password:
    description: Its password, at most 72 bytes.
    type: str
  pki_dir:
    description: Folder on the controller for the private CA and the host certificates (absolute).
    type: path
  ca_cert:
    description: The site CA's certificate on the controller (PEM); with O(ca_key). Empty for the private CA.
    type: path
  ca_key:
    description: The site CA's unencrypted key on the controller (PEM).
    type: path
  names:
    description: Names (DNS names or IP addresses) for the certificate besides the inventory name.
    type: list
    elements: str
    default: []
  days:
    description: Days a new host certificate is valid.
    type: int
    default: 825
  rounds:
    description: bcrypt's cost.
    type: int
    default: 10
  client:
    description: Also write C(client-password), for a service that scrapes the others with the password.
    type: bool
    default: false
requirements:
  - cryptography and bcrypt in the Python that runs ansible-playbook
attributes:
  check_mode:
    support: full
    description: Reports what would change; a missing CA or certificate is made in memory only.
  diff_mode:
    support: none
    description: The files hold a private key and a password hash; no diff is shown.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
"""

EXAMPLES = r"""
- name: TLS and basic auth of node_exporter
  gpuhpc.slurm.web_config:
    folder: /etc/gpuhpc/web/node_exporter
    group: prometheus
    password: "{{ vault_web_config_password }}"
    pki_dir: "{{ inventory_dir }}/pki"
    names: ["{{ ansible_host }}", localhost, 127.0.0.1]
  notify: Restart node_exporter
"""

RETURN = r"""
path:
  description: The web config file on the host (empty unless O(state=present)).
  type: str
  returned: always
ca_file:
  description: The CA file on the host (empty unless O(state=present)).
  type: str
  returned: always
password_file:
  description: The client password file on the host, with O(client).
  type: str
  returned: always
ca:
  description: The CA's certificate (PEM), with O(state=ca).
  type: str
  returned: when state is ca
made:
  description: What was made on the controller in this run (C(ca), C(ca renewed), the host's name).
  type: list
  elements: str
  returned: always
"""
