"""Connection failures are named, using PyMySQL's real errors against local sockets."""
import socket

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import dbcheck


def params(**extra):
    p = dict(login_host='127.0.0.1', login_port=1, login_user='slurm', login_password='x',
             login_db='slurm_acct_db', connect_timeout=2)
    p.update(extra)
    return p


def failure(p):
    with pytest.raises(Exception) as err:
        dbcheck.connect(p)
    return dbcheck.classify_connect_error(err.value, p['login_host'], p['login_port'], p['login_db'])


def test_refused():
    found = failure(params())
    assert found['code'] == 'connection_refused'
    assert '127.0.0.1:1' in found['message']
    assert 'login_port' in found['fix']


def test_unresolvable():
    found = failure(params(login_host='no-such-host.invalid'))
    assert found['code'] == 'host_unresolvable'
    assert "'no-such-host.invalid'" in found['message']
    assert 'login_host' in found['fix']


def test_timeout():
    # A socket that accepts connections (the kernel's backlog) but never speaks.
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    try:
        found = failure(params(login_port=server.getsockname()[1], connect_timeout=1))
    finally:
        server.close()
    assert found['code'] == 'timeout'
    assert 'connect_timeout' in found['fix']


@pytest.mark.parametrize('errno, text, code', [
    (1045, "Access denied for user 'slurm'@'10.0.0.5' (using password: YES)", 'access_denied'),
    (1049, "Unknown database 'slurm_acct_db'", 'database_missing'),
    (1044, "Access denied for user 'slurm'@'%' to database 'slurm_acct_db'", 'access_denied'),
    (2003, "Can't connect to MySQL server on 'db' ([SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed)",
     'tls_failed'),
])
def test_server_errors(errno, text, code):
    err = dbcheck.pymysql.err.OperationalError(errno, text)
    found = dbcheck.classify_connect_error(err, 'db', 3306, 'slurm_acct_db')
    assert found['code'] == code
    assert found['severity'] == 'error'
    assert found['fix']
