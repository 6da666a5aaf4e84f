"""The pure parts of the database check. The check against a real server is
tests/integration/test_db_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
    ('25.11.0', 16, 15),
    ('26.05.5', 16, 15),
])
def test_schema_version_of_each_release(release, writes, oldest):
    assert dbcheck.schema_for_release(dbcheck.parse_release(release)) == (writes, oldest)


def test_releases_before_2205_are_unknown():
    assert dbcheck.schema_for_release((21, 8, 8)) is None
    assert dbcheck.upgrades_from((21, 8, 8)) is None


@pytest.mark.parametrize('release, oldest', [
    ('22.05.8', (20, 11)),
    ('24.05.8', (23, 2)),  # two majors back
    ('24.11.5', (23, 2)),  # three majors back from 24.11 on
    ('25.11.7', (24, 5)),
    ('26.05.5', (24, 11)),
])
def test_in_place_window_of_each_release(release, oldest):
    assert dbcheck.upgrades_from(dbcheck.parse_release(release)) == oldest


def test_upgrade_path_names_each_step():
    assert dbcheck.upgrade_path((24, 11, 5), (26, 5, 5)) == [(26, 5)]
    # Debian 12's 22.05 to Debian 13's 24.11: through 23.11
    assert dbcheck.upgrade_path((22, 5, 8), (24, 11, 5)) == [(23, 11), (24, 11)]
    assert dbcheck.upgrade_path((22, 5, 8), (26, 5, 5)) == [(23, 11), (25, 5), (26, 5)]


def test_upgrade_problems_in_the_window_and_out():
    assert dbcheck.upgrade_problems({'ctl': '24.11.5-1', 'gpu-01': '24.11.5-1', 'new': ''}, '26.05.5-1') == []
    # a rerun after the controllers were upgraded: the same release is not a downgrade
    assert dbcheck.upgrade_problems({'ctl': '26.05.5-1', 'gpu-01': '24.11.5-1'}, '26.05.5-1') == []
    outside = dbcheck.upgrade_problems({'ctl': '22.05.8-4', 'gpu-01': '22.05.8-4'}, '24.11.5-1')
    assert [p['code'] for p in outside] == ['upgrade_outside_window']
    assert 'ctl, gpu-01' in outside[0]['message'] and 'from 23.02 on' in outside[0]['message']
    assert outside[0]['fix'] == 'upgrade through 23.11 then 24.11, one playbooks/upgrade.yml run each'


def test_upgrade_problems_refuse_a_downgrade_and_an_unknown_target():
    down = dbcheck.upgrade_problems({'ctl': '26.05.5-1'}, '24.11.5-1')
    assert [p['code'] for p in down] == ['upgrade_downgrade']
    assert [p['code'] for p in dbcheck.upgrade_problems({}, 'latest')] == ['upgrade_target_unknown']
    assert [p['code'] for p in dbcheck.upgrade_problems({}, '21.08.8')] == ['upgrade_target_unknown']
    newer = dbcheck.upgrade_problems({'ctl': '26.05.5-1'}, '26.11.0-1')
    assert [p['code'] for p in newer] == ['upgrade_target_unknown'] and 'knows (26.05)' in newer[0]['message']
    many = dbcheck.upgrade_problems(dict(('gpu-%02d' % i, '22.05.8') for i in range(1, 13)), '24.11.5')
    assert 'gpu-01, gpu-02, gpu-03, gpu-04, gpu-05 and 7 more' in many[0]['message']


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
    import pymysql
    err = pymysql.err.OperationalError(errno, text)
    found = dbcheck.classify_connect_error(err, 'db', 3306)
    assert found['code'] == code
    assert found['severity'] == 'error'
    assert found['fix']
