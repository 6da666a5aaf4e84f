"""gpuhpc.slurm.slurmdbd_db_check against a real MariaDB (see conftest.py):
one case per error and warning, each asserting the problem code and that the
message names the setting or privilege and the fix names what to change.

Slurm schemas are loaded from a dump of the schema slurmdbd 24.11.5 created
in the lab (fixtures/slurm_acct_db-24.11.5.sql, see its header)."""
import os
import socket
import subprocess

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dbcheck
from ansible_collections.gpuhpc.slurm.plugins.modules import slurmdbd_db_check

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
DB = 'slurm_acct_db'
SLURM_USER_GRANT = f'ALL ON `{DB}`.*'


@pytest.fixture
def check(run_module):
    def run(params, check_mode=False):
        return run_module(slurmdbd_db_check.main, params, check_mode=check_mode)
    return run


@pytest.fixture
def fresh(mariadb):
    """No accounting database and a user `slurm` with ALL on it (REQUIRE SSL), as a provider sets it up."""
    mariadb.sql(f'DROP DATABASE IF EXISTS {DB}')
    mariadb.user('slurm', [SLURM_USER_GRANT])
    yield mariadb
    mariadb.sql(f'DROP DATABASE IF EXISTS {DB}')


def load_schema(mariadb, version=None):
    """The real schema of slurmdbd 24.11.5, optionally with convert_version_table set by hand."""
    mariadb.sql(f'CREATE DATABASE {DB}')
    with open(os.path.join(FIXTURES, 'slurm_acct_db-24.11.5.sql'), 'rb') as dump:
        subprocess.run(['mariadb', f'--socket={mariadb.socket}', '--user=root', DB], stdin=dump, check=True)
    if version is not None:
        mariadb.sql(f'UPDATE {DB}.convert_version_table SET version = {int(version)}')


def codes(result):
    return [p['code'] for p in result['problems']]


def only(result, code):
    found = [p for p in result['problems'] if p['code'] == code]
    assert len(found) == 1, result['problems']
    return found[0]


# --- a fit database -----------------------------------------------------------

def test_new_database_to_create(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB}')
    result = check(fresh.params('slurm'))
    assert not result.get('failed'), result['msg']
    assert result['problems'] == []
    assert result['server']['flavor'] == 'mariadb'
    assert result['tls']['cipher'] and result['tls']['version'].startswith('TLS')
    assert result['privileges']['missing'] == []
    assert result['schema']['state'] == 'empty'
    assert result['schema']['action'] == 'create'
    assert result['schema']['expected'] == 16
    assert all(s['ok'] for s in result['settings'].values())
    assert result['changed'] is False


def test_real_schema_is_current(check, fresh):
    load_schema(fresh)
    result = check(fresh.params('slurm', cluster_name='gpulab'))
    assert not result.get('failed'), result['msg']
    schema = result['schema']
    assert (schema['state'], schema['version'], schema['action']) == ('slurm', 16, 'none')
    assert schema['clusters'] == ['gpulab']
    assert schema['cluster_registered'] is True
    assert schema['tables_missing'] == {}
    report = '\n'.join(dbcheck.report_lines(result, '127.0.0.1', fresh.port))
    assert 'Schema: slurm, version 16; 24.11.5 writes 16 (converts from 13 on): action none' in report
    assert '  ok   innodb_lock_wait_timeout = 900 (recommended >= 900)' in report
    assert 'Problems: none' in report


def test_newest_job_id_of_the_cluster(check, fresh):
    """What a controller rebuilt on an empty state folder continues after
    (FirstJobId): the newest job's id, which after ids wrapped at MaxJobId is
    not the highest."""
    load_schema(fresh)
    assert check(fresh.params('slurm', cluster_name='gpulab'))['schema']['last_job_id'] == 0
    assert check(fresh.params('slurm'))['schema']['last_job_id'] is None
    columns = ('cpus_req, job_name, id_assoc, id_job, id_resv, id_wckey, id_user, id_group, het_job_id, '
               'het_job_offset, state_reason_prev, nodes_alloc, `partition`, priority, state, time_submit')
    for job_id, submit in ((41, 100), (67043327, 200), (977, 300)):
        fresh.sql(f"INSERT INTO {DB}.gpulab_job_table ({columns}) "
                  f"VALUES (1, 'j', 1, {job_id}, 0, 0, 1000, 1000, 0, 0, 0, 1, 'gpu', 1, 3, {submit})")
    schema = check(fresh.params('slurm', cluster_name='gpulab'))['schema']
    assert schema['last_job_id'] == 977
    assert schema['unfinished_jobs'] == 3  # none has an end (time_end 0)
    fresh.sql(f"UPDATE {DB}.gpulab_job_table SET time_end = 400 WHERE id_job = 41")
    assert check(fresh.params('slurm', cluster_name='gpulab'))['schema']['unfinished_jobs'] == 2
    assert check(fresh.params('slurm', cluster_name='other'))['schema']['last_job_id'] is None


def test_check_mode_reads_only_and_runs_the_same(check, fresh):
    load_schema(fresh)
    counters = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_insert', 'Com_update', 'Com_delete', "
                "'Com_create_table', 'Com_alter_table', 'Com_drop_table', 'Com_create_db', 'Com_replace')")
    before = dict(fresh.sql(counters))
    normal, checked = check(fresh.params('slurm')), check(fresh.params('slurm'), check_mode=True)
    assert dict(fresh.sql(counters)) == before
    for key in ('server', 'privileges', 'settings', 'schema', 'problems'):
        assert normal[key] == checked[key]


def test_one_connection_and_few_queries(check, fresh):
    load_schema(fresh)
    status = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Connections', 'Questions')"
    idle = [dict(fresh.sql(status)), dict(fresh.sql(status))]
    before = dict(fresh.sql(status))
    check(fresh.params('slurm', cluster_name='gpulab'))
    after = dict(fresh.sql(status))
    overhead = {k: int(idle[1][k]) - int(idle[0][k]) for k in idle[0]}  # what one sql() call costs
    assert int(after['Connections']) - int(before['Connections']) - overhead['Connections'] == 1
    # what PyMySQL sends on any connection: one sql() call less its SHOW STATUS
    per_connection = overhead['Questions'] - 1
    queries = int(after['Questions']) - int(before['Questions']) - overhead['Questions'] - per_connection
    assert 0 < queries <= 9


# --- errors ---------------------------------------------------------------------

def test_refused(check, fresh):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    result = check(fresh.params('slurm', login_port=port))
    assert result['failed'] and codes(result) == ['connection_refused']
    assert f'127.0.0.1:{port}' in result['msg'] and 'login_port' in result['msg']


def test_unresolvable(check, fresh):
    result = check(fresh.params('slurm', login_host='no-such-db.invalid'))
    assert codes(result) == ['host_unresolvable']
    assert 'no-such-db.invalid' in result['msg'] and 'login_host' in result['msg']


def test_timeout(check, fresh):
    with socket.socket() as silent:  # accepts (kernel backlog), never speaks
        silent.bind(('127.0.0.1', 0))
        silent.listen(1)
        result = check(fresh.params('slurm', login_port=silent.getsockname()[1], connect_timeout=1))
    assert codes(result) == ['timeout']
    assert 'connect_timeout' in result['msg']


def test_tls_verification_fails(check, fresh):
    result = check(fresh.params('slurm', ca_cert=str(fresh.other_ca)))
    assert codes(result) == ['tls_failed']
    assert 'ca_cert' in only(result, 'tls_failed')['fix']


def test_plaintext_when_tls_required(check, fresh):
    fresh.user('plain', [SLURM_USER_GRANT], require_ssl=False)
    result = check(fresh.params('plain', ca_cert=None, require_tls=True))
    assert result['failed']
    found = only(result, 'tls_required')
    assert 'not encrypted' in found['message'] and 'ca_cert' in found['fix']
    assert result['tls']['cipher'] == ''


def test_access_denied(check, fresh):
    result = check(dict(fresh.params('slurm'), login_password='wrong'))
    assert codes(result) == ['access_denied']
    assert 'login_password' in result['msg']
    assert 'wrong' not in result['msg']


def test_database_missing_and_not_creatable(check, fresh):
    fresh.user('nocreate', [f'SELECT, INSERT ON `{DB}`.*'])
    result = check(fresh.params('nocreate'))
    assert result['failed']
    found = only(result, 'database_missing')
    assert DB in found['message'] and 'CREATE' in found['fix']
    assert result['schema']['state'] == 'absent'


def test_database_missing_but_creatable(check, fresh):
    result = check(fresh.params('slurm'))
    assert not result.get('failed'), result['msg']
    assert (result['schema']['state'], result['schema']['action']) == ('absent', 'create')


def test_privileges_missing(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB}')
    fresh.user('partial', [f'SELECT, INSERT, UPDATE, DELETE, CREATE ON `{DB}`.*'])
    result = check(fresh.params('partial'))
    found = only(result, 'privileges_missing')
    for privilege in ('DROP', 'ALTER', 'CREATE ROUTINE', 'ALTER ROUTINE', 'EXECUTE'):
        assert privilege in found['message'] and privilege in found['fix']
    assert 'SELECT' not in found['message'].split('lacks', 1)[1]
    assert found['fix'].startswith('GRANT ')
    assert result['privileges']['missing'] == ['DROP', 'ALTER', 'CREATE ROUTINE', 'ALTER ROUTINE', 'EXECUTE']


def test_privileges_through_a_wildcard_grant(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB}')
    fresh.user('wild', ['ALL ON `slurm\\_%`.*'])
    result = check(fresh.params('wild'))
    assert not result.get('failed'), result['msg']
    assert result['privileges']['missing'] == []


def test_schema_from_a_newer_slurm(check, fresh):
    load_schema(fresh, version=17)
    result = check(fresh.params('slurm'))
    found = only(result, 'schema_downgrade_impossible')
    assert '17' in found['message'] and 'newer' in found['message']
    assert 'backup' in found['fix']
    assert result['schema']['action'] == 'downgrade_impossible'


def test_schema_too_old(check, fresh):
    load_schema(fresh, version=12)
    result = check(fresh.params('slurm'))
    found = only(result, 'schema_too_old')
    assert '12' in found['message'] and '13' in found['message']
    assert 'intermediate' in found['fix']
    assert result['schema']['action'] == 'too_old_for_direct_upgrade'


def test_snapshot_isolation_on(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB}', 'SET GLOBAL innodb_snapshot_isolation = ON')
    try:
        result = check(fresh.params('slurm'))
    finally:
        fresh.sql('SET GLOBAL innodb_snapshot_isolation = OFF')
    found = only(result, 'snapshot_isolation_on')
    assert 'innodb_snapshot_isolation' in found['message'] and 'innodb_snapshot_isolation = OFF' in found['fix']
    assert result['settings']['innodb_snapshot_isolation'] == dict(value='ON', recommended='OFF', ok=False)


def test_every_error_is_listed(check, fresh):
    fresh.user('poor', [f'SELECT ON `{DB}`.*'])
    load_schema(fresh, version=17)
    fresh.sql('SET GLOBAL innodb_snapshot_isolation = ON')
    try:
        result = check(fresh.params('poor'))
    finally:
        fresh.sql('SET GLOBAL innodb_snapshot_isolation = OFF')
    assert set(codes(result)) == {'privileges_missing', 'snapshot_isolation_on', 'schema_downgrade_impossible'}
    assert result['msg'].startswith('3 problem(s)')


# --- warnings -------------------------------------------------------------------

@pytest.mark.parametrize('variable, low, shown', [
    ('innodb_log_file_size', 32 * 1024 * 1024, '32M'),
    ('innodb_lock_wait_timeout', 50, '50'),
    ('max_allowed_packet', 4 * 1024 * 1024, '4M'),
])
def test_setting_below_recommendation(check, fresh, variable, low, shown):
    fresh.sql(f'CREATE DATABASE {DB}')
    before = fresh.sql(f'SELECT @@GLOBAL.{variable}')[0][0]
    fresh.sql(f'SET GLOBAL {variable} = {low}')
    try:
        result = check(fresh.params('slurm'))
        strict = check(fresh.params('slurm', fail_on_warnings=True))
    finally:
        fresh.sql(f'SET GLOBAL {variable} = {before}')
    assert not result.get('failed'), result['msg']
    found = only(result, f'low_{variable}')
    assert found['severity'] == 'warning'
    assert f'{variable} is {shown}' in found['message']
    assert variable in found['fix']
    assert result['settings'][variable]['ok'] is False
    assert any(variable in w for w in result['warnings'])
    assert strict['failed'] and variable in strict['msg']


def test_buffer_pool_below_slurms_recommendation(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB}')
    result = check(fresh.params('slurm', thresholds={}))
    found = only(result, 'low_innodb_buffer_pool_size')
    assert 'innodb_buffer_pool_size is 128M, below the 4G' in found['message']
    assert result['settings']['innodb_buffer_pool_size']['recommended'] == '>= 4G'


def test_case_sensitive_collation(check, fresh):
    fresh.sql(f'CREATE DATABASE {DB} COLLATE utf8mb4_bin')
    result = check(fresh.params('slurm'))
    assert not result.get('failed'), result['msg']
    found = only(result, 'case_sensitive_collation')
    assert 'utf8mb4_bin' in found['message'] and 'COLLATE' in found['fix']


def test_upgrade_pending(check, fresh):
    load_schema(fresh, version=15)
    result = check(fresh.params('slurm'))
    assert not result.get('failed'), result['msg']
    found = only(result, 'upgrade_pending')
    assert '15' in found['message'] and '16' in found['message']
    assert 'back up first' in found['fix']
    assert result['schema']['action'] == 'upgrade'


def test_cluster_tables_missing(check, fresh):
    load_schema(fresh)
    fresh.sql(f'DROP TABLE {DB}.gpulab_job_table')
    result = check(fresh.params('slurm'))
    found = only(result, 'cluster_tables_missing')
    assert 'gpulab' in found['message'] and 'job_table' in found['message']
    assert result['schema']['tables_missing'] == {'gpulab': ['job_table']}


def test_release_read_from_slurmdbd_or_reported_unknown(check, fresh, monkeypatch):
    fresh.sql(f'CREATE DATABASE {DB}')
    monkeypatch.setenv('PATH', '/nonexistent')
    result = check(fresh.params('slurm', slurm_version=None))
    assert result['slurm_version'] == dict(release=None, source=None)
    assert 'slurm_version' in only(result, 'slurm_version_unknown')['fix']
    assert result['schema']['action'] == 'create'


def test_bad_threshold(check, fresh):
    result = check(fresh.params('slurm', thresholds=dict(max_allowed_packet='lots')))
    assert result['failed'] and result['msg'].startswith('thresholds.max_allowed_packet:')
