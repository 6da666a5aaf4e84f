#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: slurmdbd_db_check
short_description: Check that a managed MariaDB/MySQL is fit for slurmdbd before slurmdbd uses it
version_added: 0.1.0
description:
  - Opens one connection to the accounting database, the way slurmdbd will,
    from the host that will run slurmdbd, and reports the server, the TLS
    session, the user's privileges on the database, the server settings Slurm
    cares about and the state of the Slurm schema, with what the given Slurm
    release would do with it.
  - Every problem found is listed, each with a severity, a code, a message and
    the fix. Errors fail the task; warnings fail it only with
    O(fail_on_warnings=true) and are shown as Ansible warnings otherwise.
  - "Errors: the host does not resolve, the connection is refused or times out,
    TLS fails, TLS is required but the session is plaintext, the login is
    refused, the database is missing and the user may not create it, privileges
    slurmdbd needs are missing, the schema comes from a newer Slurm (no
    downgrade) or is too old for a direct upgrade, C(innodb_snapshot_isolation=ON)
    on MariaDB."
  - "Warnings: settings below Slurm's recommendations, a case-sensitive collation,
    an upgrade of the schema pending, tables of a registered cluster missing,
    foreign tables in the database, no known Slurm release."
  - Read-only, and check mode behaves the same. One connection and at most
    eight queries; never a bare TCP probe (aborted connects count toward the
    server's C(max_connect_errors)). Needs no access to the C(mysql) schema
    and no global privilege.
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
    description: Seconds to wait for the connection (and for each answer).
    type: int
    default: 10
  slurm_version:
    description:
      - The Slurm release of the slurmdbd that will use the database, like C(24.11.5).
      - Read from C(slurmdbd -V) on the target when omitted, else from the installed slurmdbd package.
        Each of these is given 30 seconds; one that fails or takes longer counts as no answer.
    type: str
  cluster_name:
    description: The cluster (ClusterName); the result says whether the database knows it.
    type: str
  thresholds:
    description: Minimum values of the server settings; the defaults are Slurm's recommendations.
    type: dict
    default: {}
    suboptions:
      innodb_buffer_pool_size:
        description: Minimum C(innodb_buffer_pool_size), bytes or a size like C(4096M).
        type: raw
        default: 4096M
      innodb_log_file_size:
        description: Minimum C(innodb_log_file_size) (or C(innodb_redo_log_capacity) on MySQL 8.0.30+).
        type: raw
        default: 64M
      innodb_lock_wait_timeout:
        description: Minimum C(innodb_lock_wait_timeout), seconds.
        type: int
        default: 900
      max_allowed_packet:
        description: Minimum C(max_allowed_packet).
        type: raw
        default: 16M
  fail_on_warnings:
    description: Fail on warnings too, not only on errors.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads only; runs the same in check mode.
  diff_mode:
    support: none
    description: Nothing is changed, so there is no diff.
notes:
  - "The schema versions come from Slurm's C(as_mysql_convert.c): 22.05 writes 12,
    23.02 writes 13, 23.11.0 to 23.11.4 write 14, 23.11.5 and 24.05 write 15,
    24.11 and later write 16; each converts from its oldest supported version on
    (returned as C(schema.oldest_convertible))."
seealso:
  - name: Slurm accounting guide
    description: The MySQL/MariaDB settings Slurm recommends.
    link: https://slurm.schedmd.com/accounting.html
'''

EXAMPLES = r'''
- name: Check the accounting database before slurmdbd starts
  gpuhpc.slurm.slurmdbd_db_check:
    login_host: slurm-acct.mariadb.example
    login_user: slurm
    login_password: "{{ slurmdbd_storage_pass }}"
    login_db: slurm_acct_db
    ca_cert: /etc/slurm/dbaas-ca.pem
    cluster_name: gpu-prod

- name: Plan an upgrade to 25.05 without failing the play
  gpuhpc.slurm.slurmdbd_db_check:
    login_host: slurm-acct.mariadb.example
    login_user: slurm
    login_password: "{{ slurmdbd_storage_pass }}"
    ca_cert: /etc/slurm/dbaas-ca.pem
    slurm_version: "25.05.3"
    thresholds:
      innodb_buffer_pool_size: 16G
  register: db
  failed_when: false
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
privileges:
  description:
    - The user as the server knows it, its global and database-wide grants,
      the privileges they give on O(login_db), and which of those slurmdbd
      needs are missing.
  returned: on connection
  type: dict
  sample:
    user: slurm@%
    grants: [{scope: "*.*", privileges: [USAGE]}, {scope: "slurm_acct_db.*", privileges: [ALL]}]
    on_database: [ALL, ALTER, ALTER ROUTINE, CREATE, CREATE ROUTINE, DELETE, DROP, EXECUTE, INSERT, SELECT, UPDATE]
    missing: []
settings:
  description: Each setting checked, with its value, the recommended value and whether it is ok.
  returned: on connection
  type: dict
  sample:
    innodb_buffer_pool_size: {value: 4294967296, recommended: ">= 4G", ok: true}
    innodb_log_file_size: {value: 67108864, recommended: ">= 64M", ok: true}
    innodb_lock_wait_timeout: {value: 900, recommended: ">= 900", ok: true}
    max_allowed_packet: {value: 16777216, recommended: ">= 16M", ok: true}
    innodb_snapshot_isolation: {value: "OFF", recommended: "OFF", ok: true}
    collation: {value: utf8mb4_uca1400_ai_ci, recommended: case-insensitive (*_ci), ok: true}
schema:
  description:
    - "C(state): C(absent) (no such database), C(empty), C(slurm), or C(other) (tables that are not Slurm's)."
    - C(version) is the schema version found in C(convert_version_table), C(expected) the one
      the given Slurm writes, C(oldest_convertible) the oldest it converts.
    - "C(action): C(create), C(none), C(upgrade), C(too_old_for_direct_upgrade),
      C(downgrade_impossible), or C(unknown) (no Slurm release known)."
    - C(clusters) are the clusters registered, C(tables_missing) the per-cluster tables missing,
      C(cluster_registered) whether O(cluster_name) is one of them (null without it).
    - C(last_job_id) is the id of the newest job in the job table of O(cluster_name), by the
      table's row order (job ids wrap at C(MaxJobId), so the newest is not always the highest);
      0 without jobs, null without that table or without O(cluster_name). A controller rebuilt on
      an empty state folder continues after it (C(FirstJobId), role gpuhpc.slurm.slurm).
    - C(unfinished_jobs) is how many jobs of O(cluster_name) have no end in the database (pending,
      running or suspended; null as C(last_job_id)). The slurm role refuses to start slurmctld on an
      empty state folder while there are any.
  returned: on connection
  type: dict
  sample:
    state: slurm
    version: 16
    expected: 16
    oldest_convertible: 13
    action: none
    clusters: [gpu-prod]
    tables_missing: {}
    cluster_registered: true
    last_job_id: 4127
    unfinished_jobs: 12
slurm_version:
  description:
    - The Slurm release the schema was judged against, and where it came from
      (C(given), C(slurmdbd -V), C(package slurmdbd), C(package slurm-slurmdbd), or null).
  returned: always
  type: dict
  sample: {release: 24.11.5, source: slurmdbd -V}
problems:
  description: Everything found wrong, each with severity (C(error) or C(warning)), code, message and fix.
  returned: always
  type: list
  elements: dict
  sample:
    - severity: warning
      code: low_innodb_lock_wait_timeout
      message: innodb_lock_wait_timeout is 50, below the 900 Slurm recommends
      fix: set innodb_lock_wait_timeout = 900 (or more) in the server parameters and restart the server
'''

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dbcheck
from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, run

# Seconds each probe of the Slurm release (slurmdbd -V, dpkg-query, rpm) may take.
PROBE_TIMEOUT = 30


def slurm_release(module):
    """The release tuple (or None) and where it came from."""
    given = module.params['slurm_version']
    if given:
        release = dbcheck.parse_release(given)
        if release is None:
            module.fail_json(msg="slurm_version '%s' is not a Slurm release (like 24.11.5)" % given)
        return release, 'given'
    # slurmdbd -V, else the package (slurmdbd -V wants a slurmdbd.conf on some releases)
    for tool, args, source in (('slurmdbd', ['-V'], 'slurmdbd -V'),
                               ('dpkg-query', ['-W', '-f=${Version}', 'slurmdbd'], 'package slurmdbd'),
                               ('rpm', ['-q', '--qf', '%{VERSION}', 'slurm-slurmdbd'], 'package slurm-slurmdbd')):
        binary = module.get_bin_path(tool)
        if binary:
            try:
                rc, out, dummy = run([binary] + args, PROBE_TIMEOUT, source)
            except CommandError:
                continue
            release = dbcheck.parse_release(out) if rc == 0 else None
            if release:
                return release, source
    return None, None


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
            slurm_version=dict(type='str'),
            cluster_name=dict(type='str'),
            thresholds=dict(type='dict', default={}, options=dict(
                innodb_buffer_pool_size=dict(type='raw', default='4096M'),
                innodb_log_file_size=dict(type='raw', default='64M'),
                innodb_lock_wait_timeout=dict(type='int', default=900),
                max_allowed_packet=dict(type='raw', default='16M'),
            )),
            fail_on_warnings=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    if not dbcheck.have_pymysql():
        module.fail_json(msg=missing_required_lib('PyMySQL (Debian: python3-pymysql)'))
    p = module.params
    for name in ('innodb_buffer_pool_size', 'innodb_log_file_size', 'max_allowed_packet'):
        try:
            dbcheck.size_bytes(p['thresholds'][name])
        except ValueError as e:
            module.fail_json(msg='thresholds.%s: %s' % (name, e))
    require_tls = p['require_tls'] if p['require_tls'] is not None else bool(p['ca_cert'])
    release, source = slurm_release(module)
    version = dict(release='%d.%02d.%d' % release if release else None, source=source)

    try:
        conn = dbcheck.connect(p)
    except Exception as e:  # pylint: disable=broad-except
        found = dbcheck.classify_connect_error(e, p['login_host'], p['login_port'])
        module.fail_json(msg='%s: %s' % (found['message'], found['fix']), problems=[found], slurm_version=version)
    try:
        facts = dbcheck.inspect(conn, p['login_db'], p['cluster_name'])
    finally:
        conn.close()

    result = dbcheck.evaluate(facts, require_tls, release, thresholds=p['thresholds'], cluster_name=p['cluster_name'],
                              host=p['login_host'], port=p['login_port'])
    result['slurm_version'] = version
    failing = [x for x in result['problems'] if x['severity'] == 'error' or p['fail_on_warnings']]
    if failing:
        module.fail_json(msg='%d problem(s) with the database: %s' % (
            len(failing), '; '.join('%s (fix: %s)' % (x['message'], x['fix']) for x in failing)), **result)
    for x in result['problems']:
        module.warn('%s (fix: %s)' % (x['message'], x['fix']))
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
