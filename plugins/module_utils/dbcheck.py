# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connecting to slurmdbd's MariaDB/MySQL and naming what went wrong."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

try:
    import pymysql
    HAS_PYMYSQL = True
except ImportError:  # pragma: no cover - reported by the module
    pymysql = None
    HAS_PYMYSQL = False


def problem(severity, code, message, fix):
    return dict(severity=severity, code=code, message=message, fix=fix)


def classify_connect_error(exc, host, port, database):
    """Turn a PyMySQL connection error into a problem dict."""
    args = getattr(exc, 'args', ())
    errno = args[0] if args and isinstance(args[0], int) else None
    text = str(args[1] if len(args) > 1 else exc)
    where = '%s:%s' % (host, port)
    if re.search(r'SSL|TLS|certificate|CERTIFICATE', text):
        return problem('error', 'tls_failed', 'TLS with %s failed: %s' % (where, text),
                       'check ca_cert (the CA that signed the server certificate), the server name against '
                       'check_hostname, and client_cert/client_key')
    if errno == 1045:
        return problem('error', 'access_denied', 'the server at %s refused the login: %s' % (where, text),
                       'check login_user and login_password; a user created with REQUIRE SSL also needs ca_cert')
    if errno == 1049:
        return problem('error', 'database_missing', "database '%s' does not exist on %s" % (database, where),
                       "create it in the provider's console (or grant CREATE on it to the user)")
    if errno in (1044, 1142):
        return problem('error', 'access_denied', 'the user may not use %s on %s: %s' % (database, where, text),
                       'grant the user ALL on %s.* (see the privileges slurmdbd needs)' % database)
    if re.search(r'Name or service not known|nodename nor servname|Temporary failure in name resolution|'
                 r'No address associated|getaddrinfo', text):
        return problem('error', 'host_unresolvable', "the database host '%s' does not resolve" % host,
                       'check login_host (the endpoint your provider gave) and DNS on this host')
    if re.search(r'[Rr]efused', text):
        return problem('error', 'connection_refused', 'nothing accepts connections on %s' % where,
                       'check login_port, that the server runs, and the provider firewall / allowed networks')
    if re.search(r'timed out|[Tt]imeout', text):
        return problem('error', 'timeout', 'no answer from %s within connect_timeout' % where,
                       'check routing and firewalls between this host and the database, or raise connect_timeout')
    return problem('error', 'connect_failed', 'cannot connect to %s: %s' % (where, text),
                   'check the connection parameters')


def connect(params):
    """Open one connection with the module's login_* / TLS parameters."""
    ssl = None
    if params.get('ca_cert') or params.get('client_cert'):
        ssl = {}
        if params.get('ca_cert'):
            ssl['ca'] = params['ca_cert']
        if params.get('client_cert'):
            ssl['cert'] = params['client_cert']
        if params.get('client_key'):
            ssl['key'] = params['client_key']
        ssl['check_hostname'] = bool(params.get('check_hostname'))
    return pymysql.connect(
        host=params['login_host'],
        port=params['login_port'],
        user=params['login_user'],
        password=params['login_password'] or '',
        database=params.get('login_db') or None,
        connect_timeout=params['connect_timeout'],
        # A server that accepts but never greets must not hang the play.
        read_timeout=params['connect_timeout'],
        write_timeout=params['connect_timeout'],
        ssl=ssl,
        autocommit=True,
    )
