# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a MariaDB/MySQL database fit for slurmdbd?

connect() opens the one connection, inspect() runs a fixed, small set of
read-only queries, evaluate() turns what was read into a report and a list of
problems. Only evaluate() decides; it is pure and unit-tested.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import re

# PyMySQL is imported by connect() only: the slurm filter file imports this
# module for its release table, and Ansible loads each filter file of the
# collection in every task's worker that looks up one of its filters.

# The one table of Slurm releases: (first release, schema version it writes,
# oldest schema version it converts, oldest release it upgrades from in place).
# Schema: CONVERT_VERSION / MIN_CONVERT_VERSION in each release's
# src/plugins/accounting_storage/mysql/as_mysql_convert.c; 22.05 had no
# lower bound in code, so SchedMD's rule (two releases back, 20.11) is used.
# In place: SLURM_MIN_PROTOCOL_VERSION in src/common/slurm_protocol_common.h
# (two major releases back up to 24.05, three from 24.11 on).
RELEASES = (
    ((22, 5, 0), 12, 9, (20, 11)),
    ((23, 2, 0), 13, 10, (21, 8)),
    ((23, 11, 0), 14, 13, (22, 5)),
    ((23, 11, 5), 15, 13, (22, 5)),
    ((24, 5, 0), 15, 13, (23, 2)),
    ((24, 11, 0), 16, 13, (23, 2)),
    ((25, 5, 0), 16, 14, (23, 11)),
    ((25, 11, 0), 16, 15, (24, 5)),
    ((26, 5, 0), 16, 15, (24, 11)),
)

# The major releases, oldest first (the stepping stones of an upgrade path).
MAJOR_RELEASES = ((20, 11), (21, 8), (22, 5), (23, 2), (23, 11), (24, 5), (24, 11), (25, 5), (25, 11), (26, 5))

# What slurmdbd needs on its database (ALL covers them).
REQUIRED_PRIVILEGES = ('SELECT', 'INSERT', 'UPDATE', 'DELETE', 'CREATE', 'DROP', 'ALTER',
                       'CREATE ROUTINE', 'ALTER ROUTINE', 'EXECUTE')

# Tables slurmdbd keeps per cluster ("<cluster>_<table>"), 22.05 and later.
CLUSTER_TABLES = (
    'assoc_table', 'assoc_usage_day_table', 'assoc_usage_hour_table', 'assoc_usage_month_table',
    'event_table', 'job_env_table', 'job_script_table', 'job_table', 'last_ran_table', 'resv_table',
    'step_table', 'suspend_table', 'usage_day_table', 'usage_hour_table', 'usage_month_table',
    'wckey_table', 'wckey_usage_day_table', 'wckey_usage_hour_table', 'wckey_usage_month_table',
)

# Slurm's accounting guide: [mysqld] settings and their recommended minimums.
DEFAULT_THRESHOLDS = dict(
    innodb_buffer_pool_size='4096M',
    innodb_log_file_size='64M',
    innodb_lock_wait_timeout=900,
    max_allowed_packet='16M',
)

SIZE_SETTINGS = ('innodb_buffer_pool_size', 'innodb_log_file_size', 'innodb_redo_log_capacity', 'max_allowed_packet')

SERVER_VARIABLES = ('innodb_buffer_pool_size', 'innodb_log_file_size', 'innodb_redo_log_capacity',
                    'innodb_lock_wait_timeout', 'max_allowed_packet', 'innodb_snapshot_isolation',
                    'collation_server')


def problem(severity, code, message, fix):
    return dict(severity=severity, code=code, message=message, fix=fix)


def parse_release(text):
    """'24.11.5' / 'slurm 24.11.5' / '22.05.8-1' -> (24, 11, 5); None when there is none."""
    m = re.search(r'(\d+)\.(\d+)(?:\.(\d+))?', text or '')
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def _release_row(release):
    found = None
    for row in RELEASES:
        if release >= row[0]:
            found = row
    return found


def schema_for_release(release):
    """(schema version written, oldest convertible) for a release tuple; None before 22.05."""
    row = _release_row(release)
    return (row[1], row[2]) if row else None


def upgrades_from(release):
    """The oldest major release (a (major, minor) tuple) that `release` upgrades from in place; None when unknown."""
    row = _release_row(release)
    return row[3] if row else None


def _major_name(major):
    return '%d.%02d' % major


def upgrade_path(installed, target):
    """The major releases to go through, in order, from `installed` to `target` (release tuples),
    each step within the in-place window; None when the table cannot name one."""
    path, here = [], installed[:2]
    while True:
        if upgrades_from(target) is not None and here >= upgrades_from(target):
            return path + [target[:2]]
        steps = [m for m in MAJOR_RELEASES if m > here and m < target[:2]
                 and upgrades_from(m + (0,)) is not None and here >= upgrades_from(m + (0,))]
        if not steps:
            return None
        here = steps[-1]
        path.append(here)


def upgrade_problems(installed, target):
    """Why an in-place upgrade to `target` (a version text) cannot start, from `installed`
    (host -> installed version text; '' where Slurm is not installed): problem dicts."""
    wanted = parse_release(target)
    if wanted is None:
        return [problem('error', 'upgrade_target_unknown',
                        "slurm_package_version '%s' is not a Slurm version" % target,
                        "set slurm_package_version to the package version to install, e.g. '26.05.5-1'")]
    if upgrades_from(wanted) is None:
        return [problem('error', 'upgrade_target_unknown',
                        'Slurm %s is older than any release this collection knows (22.05 on)' % target,
                        'upgrade to 22.05 or later')]
    if wanted[:2] > MAJOR_RELEASES[-1]:
        return [problem('error', 'upgrade_target_unknown',
                        'Slurm %s is newer than any release this collection knows (%s): its in-place window '
                        'and its schema are not in its table' % (target, _major_name(MAJOR_RELEASES[-1])),
                        'use a gpuhpc.slurm release that knows Slurm %s' % _major_name(wanted[:2]))]
    problems, by_release = [], {}
    for host, text in sorted(installed.items()):
        release = parse_release(text)
        if release is not None:
            by_release.setdefault(release, []).append(host)
    for release, hosts in sorted(by_release.items()):
        name = '.'.join(str(n) for n in release)
        where = ', '.join(hosts[:5]) + (' and %d more' % (len(hosts) - 5) if len(hosts) > 5 else '')
        if release[:2] > wanted[:2] or (release[:2] == wanted[:2] and release > wanted):
            problems.append(problem(
                'error', 'upgrade_downgrade',
                'Slurm %s is installed on %s, newer than slurm_package_version %s: Slurm cannot be downgraded in '
                'place (the state files and the database schema are newer)' % (name, where, target),
                'set slurm_package_version to %s or later, or restore the backups taken before the upgrade'
                % name))
        elif release[:2] < upgrades_from(wanted):
            path = upgrade_path(release, wanted)
            problems.append(problem(
                'error', 'upgrade_outside_window',
                'Slurm %s is installed on %s; Slurm %s upgrades in place from %s on only'
                % (name, where, target, _major_name(upgrades_from(wanted))),
                ('upgrade through %s, one playbooks/upgrade.yml run each'
                 % ' then '.join(_major_name(m) for m in path)) if path else
                'no in-place path is known: rebuild the cluster on the new release'))
    return problems


# --- connecting ------------------------------------------------------------

def classify_connect_error(exc, host, port):
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


def have_pymysql():
    """Whether the host's Python has PyMySQL (without importing it)."""
    return importlib.util.find_spec('pymysql') is not None


def connect(params):
    """Open one connection with the module's login_* / TLS parameters.

    No default database: a missing one is reported (with whether the user may
    create it), not a connection error. Without ca_cert or client_cert the
    session is plaintext, as slurmdbd's is without SSL_CA / SSL_CERT (PyMySQL
    would otherwise try unverified TLS on its own).
    """
    import pymysql
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
        connect_timeout=params['connect_timeout'],
        # A server that accepts but never greets must not hang the play.
        read_timeout=params['connect_timeout'],
        write_timeout=params['connect_timeout'],
        ssl=ssl,
        ssl_disabled=ssl is None,
        autocommit=True,
    )


# --- reading (at most nine queries, all read-only) --------------------------

def quote_name(name):
    return '`%s`' % name.replace('`', '``')


def inspect(conn, database, cluster_name=None):
    """Read what evaluate() needs. Touches neither the mysql schema nor any global privilege.

    With ``cluster_name``, also the id of the newest job of that cluster's job
    table (``last_job_id``: 0 without jobs, None without the table). Newest by
    the table's own row number (job_db_inx, its primary key: one index look-up),
    not the highest id: job ids wrap at MaxJobId, and after a wrap the newest
    job has a low id. And how many of its jobs have not ended (``unfinished_jobs``:
    pending, running or suspended for the database; a controller that starts
    on an empty state folder loses every one).
    """
    facts = dict(database=database, last_job_id=None, unfinished_jobs=None)
    with conn.cursor() as cur:
        cur.execute('SELECT VERSION(), @@version_comment, CURRENT_USER()')
        facts['version'], facts['version_comment'], facts['user'] = cur.fetchone()
        cur.execute("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
        facts['ssl'] = dict(cur.fetchall())
        cur.execute('SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)' % ', '.join(['%s'] * len(SERVER_VARIABLES)),
                    SERVER_VARIABLES)
        facts['variables'] = dict(cur.fetchall())
        cur.execute('SHOW GRANTS')
        facts['grants'] = [row[0] for row in cur.fetchall()]
        cur.execute('SELECT DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s',
                    (database,))
        row = cur.fetchone()
        facts['exists'] = row is not None
        facts['collation'] = row[0] if row else None
        facts['tables'] = []
        facts['schema_version'] = None
        facts['clusters'] = []
        if not facts['exists']:
            return facts
        cur.execute('SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s', (database,))
        facts['tables'] = sorted(row[0] for row in cur.fetchall())
        if 'convert_version_table' in facts['tables']:
            cur.execute('SELECT version FROM %s.convert_version_table' % quote_name(database))
            row = cur.fetchone()
            facts['schema_version'] = int(row[0]) if row else None
        if 'cluster_table' in facts['tables']:
            cur.execute('SELECT name FROM %s.cluster_table WHERE deleted = 0 ORDER BY name' % quote_name(database))
            facts['clusters'] = [row[0] for row in cur.fetchall()]
        job_table = '%s_job_table' % cluster_name
        if cluster_name and job_table in facts['tables']:
            table = '%s.%s' % (quote_name(database), quote_name(job_table))
            cur.execute('SELECT (SELECT id_job FROM %s ORDER BY job_db_inx DESC LIMIT 1), '
                        '(SELECT COUNT(*) FROM %s WHERE time_end = 0 AND deleted = 0)' % (table, table))
            last, unfinished = cur.fetchone()
            facts['last_job_id'] = int(last) if last is not None else 0
            facts['unfinished_jobs'] = int(unfinished or 0)
    return facts


# --- privileges --------------------------------------------------------------

# Routine grants ('ON PROCEDURE `db`.`p`') and role grants ('GRANT `role` TO') do not match.
_GRANT = re.compile(r'^GRANT (?P<privs>.+?) ON (?P<db>\*|`(?:[^`]|``)*`)\.(?P<table>\*|`(?:[^`]|``)*`) TO ')


def _split_privileges(text):
    """'SELECT, INSERT (a, b), ALL PRIVILEGES' -> ['SELECT', 'ALL'] (column grants dropped)."""
    out, depth, item = [], 0, ''
    for ch in text + ',':
        if ch == '(':
            depth += 1
        elif ch == ')':
            depth -= 1
        if ch == ',' and depth == 0:
            item = item.strip()
            if item and '(' not in item:
                out.append('ALL' if item.upper() in ('ALL', 'ALL PRIVILEGES') else item.upper())
            item = ''
        else:
            item += ch
    return out


def parse_grants(lines):
    """SHOW GRANTS lines -> [{'scope': '<db pattern>.*' | '*.*', 'db': pattern | None, 'privileges': [...]}].

    Only global and database-wide grants count for slurmdbd: table, column and
    routine grants and role grants are left out. Passwords never leave here.
    """
    grants = []
    for line in lines:
        m = _GRANT.match(line)
        if not m or m.group('table') != '*':
            continue
        db = None if m.group('db') == '*' else m.group('db')[1:-1].replace('``', '`')
        grants.append(dict(scope='*.*' if db is None else '%s.*' % db, db=db,
                           privileges=_split_privileges(m.group('privs'))))
    return grants


def db_pattern_matches(pattern, name):
    """MySQL database-level grant patterns: '_' and '%' are wildcards unless escaped with '\\'."""
    rx, i = '', 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == '\\' and i + 1 < len(pattern):
            rx += re.escape(pattern[i + 1])
            i += 2
            continue
        rx += '.' if ch == '_' else '.*' if ch == '%' else re.escape(ch)
        i += 1
    return re.match('^%s$' % rx, name) is not None


def privileges_on(grants, database):
    """The privileges the grants give on a database (global and matching database grants)."""
    found = set()
    for grant in grants:
        if grant['db'] is None or db_pattern_matches(grant['db'], database):
            found.update(p for p in grant['privileges'] if p != 'USAGE')
    if 'ALL' in found:
        return set(REQUIRED_PRIVILEGES) | {'ALL'}
    return found


# --- deciding -----------------------------------------------------------------

def size_bytes(value):
    """Bytes from an int or '4096M' / '4G' style string."""
    if isinstance(value, int):
        return value
    m = re.match(r'^\s*(\d+)\s*([KMGT]?)B?\s*$', str(value), re.I)
    if not m:
        raise ValueError("'%s' is not a size (like 4096M or 4G)" % value)
    return int(m.group(1)) * 1024 ** ' KMGT'.index(m.group(2).upper() or ' ')


def _human(nbytes):
    for unit, size in (('G', 1024 ** 3), ('M', 1024 ** 2), ('K', 1024)):
        if nbytes >= size and nbytes % size == 0:
            return '%d%s' % (nbytes // size, unit)
    return str(nbytes)


def _settings(facts, thresholds, flavor, problems):
    variables = facts['variables']
    settings = {}
    log_var = 'innodb_redo_log_capacity' if 'innodb_redo_log_capacity' in variables else 'innodb_log_file_size'
    checks = (
        ('innodb_buffer_pool_size', 'innodb_buffer_pool_size'),
        (log_var, 'innodb_log_file_size'),
        ('innodb_lock_wait_timeout', 'innodb_lock_wait_timeout'),
        ('max_allowed_packet', 'max_allowed_packet'),
    )
    for name, threshold in checks:
        is_size = name in SIZE_SETTINGS
        if name not in variables:
            continue
        value = int(variables[name])
        minimum = size_bytes(thresholds[threshold]) if is_size else int(thresholds[threshold])
        shown = _human if is_size else str
        ok = value >= minimum
        settings[name] = dict(value=value, recommended='>= %s' % shown(minimum), ok=ok)
        if not ok:
            problems.append(problem(
                'warning', 'low_%s' % name,
                '%s is %s, below the %s Slurm recommends' % (name, shown(value), shown(minimum)),
                'set %s = %s (or more) in the server parameters (the provider console / parameter group) '
                'and restart the server' % (name, shown(minimum))))
    if 'innodb_snapshot_isolation' in variables:
        value = variables['innodb_snapshot_isolation'].upper()
        ok = value in ('OFF', '0')
        settings['innodb_snapshot_isolation'] = dict(value=value, recommended='OFF', ok=ok)
        if not ok and flavor == 'mariadb':
            problems.append(problem(
                'error', 'snapshot_isolation_on',
                'innodb_snapshot_isolation is ON (the default from MariaDB 11.6.2); Slurm does not support it '
                'and slurmdbd fails with lock errors',
                'set innodb_snapshot_isolation = OFF in the server parameters (the provider console / '
                'parameter group)'))
    collation = facts['collation'] or variables.get('collation_server', '')
    sensitive = bool(re.search(r'_(bin|cs)$', collation))
    settings['collation'] = dict(value=collation, recommended='case-insensitive (*_ci)', ok=not sensitive)
    if sensitive:
        where = "database '%s'" % facts['database'] if facts['collation'] else 'server default (collation_server)'
        problems.append(problem(
            'warning', 'case_sensitive_collation',
            'the %s collation %s is case-sensitive; Slurm compares user, account and cluster names '
            'case-insensitively' % (where, collation),
            'use a case-insensitive collation (e.g. utf8mb4_general_ci): ALTER DATABASE %s COLLATE '
            'utf8mb4_general_ci, or set collation_server before the database is created' % facts['database']))
    return settings


def _schema(facts, expected, problems, privileges, cluster_name):
    db = facts['database']
    tables = facts['tables']
    found = facts['schema_version']
    if not facts['exists']:
        state = 'absent'
    elif not tables:
        state = 'empty'
    elif 'convert_version_table' in tables or 'cluster_table' in tables:
        state = 'slurm'
    else:
        state = 'other'
    schema = dict(state=state, version=found, expected=expected[0] if expected else None,
                  oldest_convertible=expected[1] if expected else None, clusters=facts['clusters'],
                  tables_missing={}, cluster_registered=None, last_job_id=facts.get('last_job_id'),
                  unfinished_jobs=facts.get('unfinished_jobs'))

    if state == 'absent':
        schema['action'] = 'create'
        if 'CREATE' not in privileges:
            problems.append(problem(
                'error', 'database_missing',
                "database '%s' does not exist (or the user has no rights on it) and the user may not create it" % db,
                "create the database in the provider's console, or grant the user CREATE on %s.*" % db))
        return schema
    if state in ('empty', 'other'):
        schema['action'] = 'create'
        if state == 'other':
            problems.append(problem(
                'warning', 'foreign_tables',
                "database '%s' holds tables that are not Slurm's (%s)" % (db, ', '.join(tables[:5])),
                'give slurmdbd a database of its own (login_db / StorageLoc)'))
        return schema

    # A Slurm schema: per-cluster tables, then what the given release would do with it.
    for cluster in facts['clusters']:
        missing = [t for t in CLUSTER_TABLES if '%s_%s' % (cluster, t) not in tables]
        if missing:
            schema['tables_missing'][cluster] = missing
    if schema['tables_missing']:
        listed = ['cluster %s: %s' % (c, ', '.join(m)) for c, m in sorted(schema['tables_missing'].items())]
        problems.append(problem(
            'warning', 'cluster_tables_missing', 'tables missing for %s' % '; '.join(listed),
            'slurmdbd recreates them empty; if they held history, restore them from a backup first'))
    if cluster_name:
        schema['cluster_registered'] = cluster_name in facts['clusters']

    if expected is None:
        schema['action'] = 'unknown'
    elif 'convert_version_table' not in tables:
        # Tables from before convert_version_table existed (Slurm 17.02 and older).
        schema['action'] = 'too_old_for_direct_upgrade'
    elif found is None or found == expected[0]:
        # An empty convert_version_table is taken as current by slurmdbd.
        schema['action'] = 'none'
    elif found > expected[0]:
        schema['action'] = 'downgrade_impossible'
    elif found < expected[1]:
        schema['action'] = 'too_old_for_direct_upgrade'
    else:
        schema['action'] = 'upgrade'

    if schema['action'] == 'downgrade_impossible':
        problems.append(problem(
            'error', 'schema_downgrade_impossible',
            "the schema in '%s' is version %s, written by a newer Slurm than this one (which writes %s); "
            'slurmdbd refuses it and a downgrade is impossible' % (db, found, expected[0]),
            'run the Slurm release that wrote it (or newer), or restore a backup taken before the upgrade'))
    elif schema['action'] == 'too_old_for_direct_upgrade':
        problems.append(problem(
            'error', 'schema_too_old',
            "the schema in '%s' is version %s; this Slurm converts from version %s on only"
            % (db, 'older than 17.11' if found is None else found, expected[1]),
            'back up the database, then upgrade through an intermediate Slurm release (run its slurmdbd once '
            'until the conversion finishes) before this one'))
    elif schema['action'] == 'upgrade':
        problems.append(problem(
            'warning', 'upgrade_pending',
            "the schema in '%s' is version %s; this Slurm will convert it to %s when slurmdbd starts"
            % (db, found, expected[0]),
            'back up first (mysqldump --single-transaction %s), then start the new slurmdbd by hand '
            '(slurmdbd -D -vvv) and let the conversion finish before starting slurmctld' % db))
    return schema


def evaluate(facts, require_tls, slurm_release, thresholds=None, cluster_name=None, host='', port=''):
    """What the facts mean for slurmdbd: the report, with problems (errors and warnings)."""
    thresholds = dict(DEFAULT_THRESHOLDS, **(thresholds or {}))
    problems = []
    text = '%s %s' % (facts['version'], facts['version_comment'])
    flavor = 'mariadb' if 'mariadb' in text.lower() else 'mysql'
    server = dict(flavor=flavor, version=facts['version'])
    tls = dict(version=facts['ssl'].get('Ssl_version', ''), cipher=facts['ssl'].get('Ssl_cipher', ''))
    if require_tls and not tls['cipher']:
        problems.append(problem('error', 'tls_required', 'the session to %s:%s is not encrypted' % (host, port),
                                'give ca_cert (the provider CA), or enable TLS on the server'))

    grants = parse_grants(facts['grants'])
    have = privileges_on(grants, facts['database'])
    missing = [p for p in REQUIRED_PRIVILEGES if p not in have]
    privileges = dict(user=facts['user'], grants=[dict(scope=g['scope'], privileges=g['privileges']) for g in grants],
                      on_database=sorted(have), missing=missing)
    if missing and facts['exists']:
        problems.append(problem(
            'error', 'privileges_missing',
            "user %s lacks %s on '%s'" % (facts['user'], ', '.join(missing), facts['database']),
            'GRANT %s ON %s.* TO %s (or ALL)' % (', '.join(missing), quote_name(facts['database']), facts['user'])))

    settings = _settings(facts, thresholds, flavor, problems)

    expected = None
    if slurm_release is None:
        problems.append(problem('warning', 'slurm_version_unknown',
                                'no Slurm release given and no slurmdbd installed here: the schema action is unknown',
                                'give slurm_version (the slurmdbd release that will run)'))
    else:
        expected = schema_for_release(slurm_release)
        if expected is None:
            problems.append(problem('warning', 'slurm_version_unsupported',
                                    'Slurm %d.%02d.%d is older than 22.05, which this check knows' % slurm_release,
                                    'upgrade Slurm, or check the schema by hand'))
    schema = _schema(facts, expected, problems, have, cluster_name)
    return dict(server=server, tls=tls, privileges=privileges, settings=settings, schema=schema, problems=problems)


# --- the readable report ----------------------------------------------------------

def report_lines(result, host='', port=''):
    """The module's result as lines for a person (playbooks/check_dbaas.yml)."""
    lines = []
    server = result.get('server')
    if server:
        priv = result['privileges']
        lines.append('Server %s:%s: %s %s, as %s' % (host, port, server['flavor'], server['version'], priv['user']))
        tls = result['tls']
        lines.append('TLS: %s' % ('%s %s' % (tls['version'], tls['cipher']) if tls['cipher'] else 'none (plaintext)'))
        lines.append('Privileges on the database: %s%s' % (
            ', '.join(priv['on_database']) or 'none',
            '; missing %s' % ', '.join(priv['missing']) if priv['missing'] else ''))
        for name, s in sorted(result['settings'].items()):
            value = _human(s['value']) if name in SIZE_SETTINGS else s['value']
            lines.append('  %-4s %s = %s (recommended %s)' % ('ok' if s['ok'] else 'BAD', name, value, s['recommended']))
        schema = result['schema']
        release = (result.get('slurm_version') or {}).get('release') or 'unknown Slurm'
        found = ', version %s' % schema['version'] if schema['version'] is not None else ''
        if schema['expected'] is None:
            lines.append('Schema: %s%s; Slurm release unknown: action %s' % (schema['state'], found, schema['action']))
        else:
            lines.append('Schema: %s%s; %s writes %s (converts from %s on): action %s' % (
                schema['state'], found, release, schema['expected'], schema['oldest_convertible'], schema['action']))
        if schema['clusters']:
            lines.append('Clusters: %s' % ', '.join(schema['clusters']))
    problems = result.get('problems') or []
    if not problems and result.get('failed'):
        problems = [problem('error', 'failed', result.get('msg', ''), '')]
    lines.append('Problems: %s' % ('none' if not problems else len(problems)))
    for p in problems:
        lines.append('  %s %s: %s' % (p['severity'].upper(), p['code'], p['message']))
        if p['fix']:
            lines.append('    fix: %s' % p['fix'])
    return lines
