#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: slurmdbd_db_check
short_description: Check that slurmdbd can use a managed MariaDB/MySQL before it starts
version_added: 0.1.0
description:
  - Opens one connection to the accounting database, the way slurmdbd will,
    from the host that will run slurmdbd, and reports the server and the TLS
    session. A connection that fails is named (unresolvable host, refused,
    timeout, TLS failure, access denied, missing database) with the fix.
  - Read-only; check mode behaves the same. Never a bare TCP probe.
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
requirements:
  - PyMySQL on the target (Debian C(python3-pymysql)).
options:
  login_host:
    description: Database endpoint (StorageHost).
    type: str
    required: true
  login_port:
    description: Database port (StoragePort).
    type: int
    default: 3306
  login_user:
    description: Database user (StorageUser).
    type: str
    required: true
  login_password:
    description: Password (StoragePass).
    type: str
    default: ""
  login_db:
    description: The accounting database (StorageLoc).
    type: str
    default: slurm_acct_db
  ca_cert:
    description: CA certificate (PEM) on the target that signed the server certificate.
    type: path
  client_cert:
    description: Client certificate (PEM) on the target, when the server asks for one.
    type: path
  client_key:
    description: Key of O(client_cert) on the target.
    type: path
  check_hostname:
    description: Verify that the server certificate names O(login_host).
    type: bool
    default: true
  require_tls:
    description: Fail when the session is not encrypted. Defaults to true when O(ca_cert) is given.
    type: bool
  connect_timeout:
    description: Seconds to wait for the connection.
    type: int
    default: 10
attributes:
  check_mode:
    support: full
    description: Reads only; runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is no diff.
'''

EXAMPLES = r'''
- name: Check the accounting database before slurmdbd starts
  gpuhpc.slurm.slurmdbd_db_check:
    login_host: slurm-acct.mariadb.example
    login_user: slurm
    login_password: "{{ slurmdbd_storage_pass }}"
    login_db: slurm_acct_db
    ca_cert: /etc/slurm/dbaas-ca.pem
  no_log: false
'''

RETURN = r'''
server:
  description: Server flavour and version.
  returned: on connection
  type: dict
  sample: {flavor: mariadb, version: 11.8.3-MariaDB-0+deb13u1}
tls:
  description: TLS of the session (empty strings when plaintext).
  returned: on connection
  type: dict
  sample: {version: TLSv1.3, cipher: TLS_AES_256_GCM_SHA384}
problems:
  description: What is wrong, each with severity, code, message and fix.
  returned: always
  type: list
  elements: dict
  sample: [{severity: error, code: access_denied, message: "...", fix: "..."}]
'''

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dbcheck


def main():
    module = AnsibleModule(
        argument_spec=dict(
            login_host=dict(type='str', required=True),
            login_port=dict(type='int', default=3306),
            login_user=dict(type='str', required=True),
            login_password=dict(type='str', default='', no_log=True),
            login_db=dict(type='str', default='slurm_acct_db'),
            ca_cert=dict(type='path'),
            client_cert=dict(type='path'),
            client_key=dict(type='path', no_log=False),
            check_hostname=dict(type='bool', default=True),
            require_tls=dict(type='bool'),
            connect_timeout=dict(type='int', default=10),
        ),
        supports_check_mode=True,
    )
    if not dbcheck.HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib('PyMySQL (Debian: python3-pymysql)'))
    p = module.params
    require_tls = p['require_tls'] if p['require_tls'] is not None else bool(p['ca_cert'])

    try:
        conn = dbcheck.connect(p)
    except Exception as e:  # pylint: disable=broad-except
        found = dbcheck.classify_connect_error(e, p['login_host'], p['login_port'], p['login_db'])
        module.fail_json(msg='%s: %s' % (found['message'], found['fix']), problems=[found])

    problems = []
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT VERSION()')
            version = cur.fetchone()[0]
            cur.execute("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
            status = dict(cur.fetchall())
    finally:
        conn.close()

    server = dict(flavor='mariadb' if 'mariadb' in version.lower() else 'mysql', version=version)
    tls = dict(version=status.get('Ssl_version', ''), cipher=status.get('Ssl_cipher', ''))
    if require_tls and not tls['cipher']:
        problems.append(dbcheck.problem('error', 'tls_required', 'the session to %s:%s is not encrypted'
                                        % (p['login_host'], p['login_port']),
                                        'give ca_cert, or enable TLS on the server'))
    errors = [x for x in problems if x['severity'] == 'error']
    if errors:
        module.fail_json(msg='; '.join('%s: %s' % (x['message'], x['fix']) for x in errors),
                         server=server, tls=tls, problems=problems)
    module.exit_json(changed=False, server=server, tls=tls, problems=problems)


if __name__ == '__main__':
    main()
