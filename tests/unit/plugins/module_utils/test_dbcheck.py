"""The pure parts of the database check. The check against a real server is
tests/integration/test_db_check.py."""
import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dbcheck


@pytest.mark.parametrize('release, writes, oldest', [
    ('22.05.8', 12, 9),
    ('23.02.7', 13, 10),
    ('23.11.0', 14, 13),
    ('23.11.4', 14, 13),
    ('23.11.5', 15, 13),
    ('23.11.10', 15, 13),
    ('24.05.8', 15, 13),
    ('24.11.0', 16, 13),
    ('24.11.5', 16, 13),
    ('25.05.3', 16, 14),
    ('25.11.0', 16, 14),
])
def test_schema_version_of_each_release(release, writes, oldest):
    assert dbcheck.schema_for_release(dbcheck.parse_release(release)) == (writes, oldest)


def test_releases_before_2205_are_unknown():
    assert dbcheck.schema_for_release((21, 8, 8)) is None


@pytest.mark.parametrize('text, release', [
    ('slurm-wlm 24.11.5', (24, 11, 5)),  # slurmdbd -V, Debian 13
    ('slurm-wlm 22.05.8', (22, 5, 8)),  # slurmdbd -V, Debian 12
    ('slurm 23.11.10', (23, 11, 10)),
    ('25.05', (25, 5, 0)),
    ('no version here', None),
])
def test_parse_release(text, release):
    assert dbcheck.parse_release(text) == release


def test_grants_as_mariadb_shows_them():
    # SHOW GRANTS of the lab's slurm user (MariaDB 11.8), plus the kinds that must not count
    lines = [
        "GRANT USAGE ON *.* TO `slurm`@`%` IDENTIFIED BY PASSWORD '*515E05A095253DE5AF58A847A0E28AA67A73D31E' "
        "REQUIRE SSL",
        'GRANT ALL PRIVILEGES ON `slurm_acct_db`.* TO `slurm`@`%`',
        'GRANT SELECT (id_job), UPDATE ON `other`.* TO `slurm`@`%`',
        'GRANT SELECT ON `slurm_acct_db`.`job_table` TO `slurm`@`%`',
        'GRANT EXECUTE ON PROCEDURE `slurm_acct_db`.`get_parent_limits` TO `slurm`@`%`',
        'GRANT `dba` TO `slurm`@`%`',
    ]
    grants = dbcheck.parse_grants(lines)
    assert grants == [
        dict(scope='*.*', db=None, privileges=['USAGE']),
        dict(scope='slurm_acct_db.*', db='slurm_acct_db', privileges=['ALL']),
        dict(scope='other.*', db='other', privileges=['UPDATE']),
    ]
    assert 'PASSWORD' not in repr(grants)
    assert dbcheck.privileges_on(grants, 'slurm_acct_db') >= set(dbcheck.REQUIRED_PRIVILEGES)
    assert dbcheck.privileges_on(grants, 'other') == {'UPDATE'}


@pytest.mark.parametrize('pattern, name, matches', [
    ('slurm_acct_db', 'slurm_acct_db', True),
    ('slurm_acct_db', 'slurmXacctXdb', True),  # '_' is a wildcard in grants
    ('slurm\\_acct\\_db', 'slurmXacctXdb', False),
    ('slurm\\_acct\\_db', 'slurm_acct_db', True),
    ('slurm%', 'slurm_acct_db', True),
    ('slurm%', 'other', False),
])
def test_grant_patterns(pattern, name, matches):
    assert dbcheck.db_pattern_matches(pattern, name) is matches


@pytest.mark.parametrize('value, size', [(1024, 1024), ('16M', 16 << 20), ('4G', 4 << 30), ('64MB', 64 << 20)])
def test_sizes(value, size):
    assert dbcheck.size_bytes(value) == size


def test_bad_size():
    with pytest.raises(ValueError, match="'lots' is not a size"):
        dbcheck.size_bytes('lots')


@pytest.mark.parametrize('errno, text, code', [
    (1045, "Access denied for user 'slurm'@'10.0.0.5' (using password: YES)", 'access_denied'),
    (2003, "Can't connect to MySQL server on 'db' ([SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed)",
     'tls_failed'),
    (2003, "Can't connect to MySQL server on 'db' ([Errno 111] Connection refused)", 'connection_refused'),
    (2003, "Can't connect to MySQL server on 'db' (timed out)", 'timeout'),
    (2003, "Can't connect to MySQL server on 'db' ([Errno -2] Name or service not known)", 'host_unresolvable'),
])
def test_connect_errors(errno, text, code):
    err = dbcheck.pymysql.err.OperationalError(errno, text)
    found = dbcheck.classify_connect_error(err, 'db', 3306)
    assert found['code'] == code
    assert found['severity'] == 'error'
    assert found['fix']
