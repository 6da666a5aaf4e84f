# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm accounting (QoS, accounts, users) through sacctmgr, declaratively.

Runner runs sacctmgr: reads with -nP and an explicit format=, writes with -i,
stdin closed, a timeout, known error texts turned into codes. read_state()
reads everything a plan needs in at most six invocations; plan() compares the
wanted entities with it (values normalised: TRES units and order, durations,
lists as sets, -1 as no limit) and returns the few batched commands that make
the difference, in a safe order; apply() runs them and says what was applied.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import subprocess

PROTECTED_QOS = ('normal',)
PROTECTED_ACCOUNTS = ('root',)
PROTECTED_USERS = ('root',)

# module option -> (sacctmgr read field, sacctmgr write key, kind)
QOS_FIELDS = dict(
    description=('Description', 'description', 'text'),
    priority=('Priority', 'priority', 'int'),
    flags=('Flags', 'flags', 'set'),
    usage_factor=('UsageFactor', 'usagefactor', 'float'),
    grp_tres=('GrpTRES', 'grptres', 'tres'),
    grp_jobs=('GrpJobs', 'grpjobs', 'int'),
    max_tres_per_user=('MaxTRESPU', 'maxtresperuser', 'tres'),
    max_tres_per_job=('MaxTRES', 'maxtresperjob', 'tres'),
    max_jobs_per_user=('MaxJobsPU', 'maxjobsperuser', 'int'),
    max_submit_jobs_per_user=('MaxSubmitPU', 'maxsubmitjobsperuser', 'int'),
    max_wall=('MaxWall', 'maxwall', 'duration'),
    preempt=('Preempt', 'preempt', 'set'),
)

# Association fields (accounts and users), per cluster.
ASSOC_FIELDS = dict(
    fairshare=('Fairshare', 'fairshare', 'share'),
    qos=('QOS', 'qos', 'set'),
    default_qos=('DefaultQOS', 'defaultqos', 'name'),
    grp_tres=('GrpTRES', 'grptres', 'tres'),
    grp_jobs=('GrpJobs', 'grpjobs', 'int'),
    grp_submit_jobs=('GrpSubmit', 'grpsubmitjobs', 'int'),
    max_tres_per_job=('MaxTRES', 'maxtresperjob', 'tres'),
    max_jobs=('MaxJobs', 'maxjobs', 'int'),
    max_submit_jobs=('MaxSubmit', 'maxsubmitjobs', 'int'),
    max_wall=('MaxWall', 'maxwall', 'duration'),
)

ACCOUNT_FIELDS = dict(
    description=('Description', 'description', 'text'),
    organization=('Organization', 'organization', 'text'),
)

USER_FIELDS = dict(
    default_account=('DefaultAccount', 'defaultaccount', 'name'),
    admin_level=('AdminLevel', 'adminlevel', 'admin'),
)

# Known sacctmgr error texts (as Slurm 22.05 and 24.11 print them) -> (code, fix).
ERRORS = (
    (r'Problem talking to the database|Connection refused|Unable to connect to database|'
     r'slurmdbd.*(not responding|unreachable)|Socket timed out|Connection lost',
     'slurmdbd_unreachable', 'check that slurmdbd runs and answers on the controller (systemctl status slurmdbd)'),
    (r"Cluster '.*' has not been added|This cluster '.*' doesn't exist",
     'cluster_not_registered', 'start slurmctld once (it registers the cluster) or run: sacctmgr add cluster <name>'),
    (r'Unknown QOS flag',
     'bad_qos_flag', "use flags that Slurm knows (the QOS FLAGS of the sacctmgr man page), or flags: [] to clear them"),
    (r'Job\(s\) active, cancel job\(s\) before remove',
     'jobs_running', 'wait until the jobs of the associations listed end (squeue --account=ACCOUNT), or cancel '
                     'them, then run again'),
    (r'can not remove the default account of a user',
     'default_account', "change the default_account of the users listed first, or remove those users as well"),
    (r"bad qos|(Unknown|Invalid) (QOS|qos)|[Qq][Oo][Ss] .*(doesn't exist|does not exist)",
     'unknown_qos', 'add the QoS first (sacctmgr_qos, or slurm_accounting_qos)'),
    (r"No parent account|[Pp]arent account .*(doesn't exist|does not exist)",
     'parent_missing', 'add the parent account first, or correct parent'),
    (r"No account \S+ on cluster|This account '.*' doesn't exist",
     'account_missing', 'add the account first (sacctmgr_account, or slurm_accounting_accounts)'),
    (r'no TRES known|[Uu]nknown TRES|[Ii]nvalid TRES',
     'unknown_tres', 'add the TRES to AccountingStorageTRES in slurm.conf (e.g. gres/gpu) and restart slurmctld'),
    (r'[Aa]ccess denied|[Pp]ermission denied|[Oo]nly (root|admins?)|[Nn]ot authorized',
     'access_denied', 'run as root or as a Slurm administrator (AdminLevel=Admin)'),
)

# What sacctmgr says on a line of its own, with exit status 1, when there was nothing to do.
NOTHING = re.compile(r'^\s*(Nothing (new )?(added|deleted|modified)\.?|Already existing .*)\s*$', re.I | re.M)

# What sacctmgr's list parser (slurm_addto_char_list_with_case) splits (',' and
# blanks), takes as a new key ('='), turns into backticks (quotes) or expands as
# a host list ('[...]'); and what its parsable output cannot carry ('|').
BAD_NAME = re.compile(r'[\s,=\'"`\[\]|]')


class SacctmgrError(Exception):
    def __init__(self, code, message, fix):
        super(SacctmgrError, self).__init__(message)
        self.code = code
        self.message = message
        self.fix = fix
        # set by apply() when a write fails half-way
        self.applied = []
        self.not_applied = []


def check_value(what, value):
    """sacctmgr's parsable output and its command line cannot carry '|' or newlines."""
    text = str(value)
    if '|' in text or '\n' in text or '\r' in text:
        raise SacctmgrError('bad_value', "%s: the value %r contains '|' or a newline, which sacctmgr "
                                         "cannot store or show" % (what, text), 'remove the character from the value')
    return text


def entity_name(what, value, keep_case=False):
    """A QoS, account or user name as Slurm stores it: lower case (user names keep
    their case only under slurmdbd.conf's Parameters=PreserveCaseUser)."""
    text = '' if value is None else str(value)
    bad = sorted(set(BAD_NAME.findall(text)))
    if not text or bad:
        why = 'is empty' if not text else ('contains %s, which sacctmgr splits or rewrites'
                                           % ' '.join(repr(c) for c in bad))
        raise SacctmgrError('bad_name', '%s %r %s' % (what, text, why), 'use a name of letters, digits and . _ - @ only')
    return text if keep_case else text.lower()


def slurm_text(value):
    """A description or organization as sacctmgr stores it (strip_quotes): a
    leading quote opens a quoted part that the same quote ends, other quotes
    become backticks, and the text is lower-cased."""
    text = value.strip()
    if text[:1] in ('"', "'"):
        end = text.find(text[0], 1)
        text = text[1:] if end < 0 else text[1:end]
    return text.replace('"', '`').replace("'", '`').lower()


class Runner:
    """Runs sacctmgr; counts invocations and keeps the commands run."""

    def __init__(self, binary='sacctmgr', timeout=60):
        self.binary = binary
        self.timeout = timeout
        self.calls = 0
        self.commands = []

    def _run(self, args):
        self.calls += 1
        cmd = [self.binary] + args
        self.commands.append(' '.join(args))
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=self.timeout,
                                  check=False, universal_newlines=True)
        except subprocess.TimeoutExpired:
            raise SacctmgrError('timeout', 'sacctmgr %s did not finish within %s s' % (' '.join(args), self.timeout),
                                'check that slurmdbd answers (sacctmgr ping), or raise timeout')
        except OSError as e:
            raise SacctmgrError('no_sacctmgr', 'cannot run %s: %s' % (self.binary, e),
                                'run this on a host with the Slurm client commands (the controller)')
        return proc.returncode, proc.stdout, proc.stderr

    @staticmethod
    def classify(text):
        for pattern, code, fix in ERRORS:
            if re.search(pattern, text):
                return code, fix
        return None

    def read(self, entity, fields, where=(), options=()):
        """Rows of `sacctmgr -nP show ENTITY [where ...] format=... [options]` as lists of strings."""
        args = ['-nP', 'show', entity] + list(where) + ['format=' + ','.join(fields)] + list(options)
        rc, out, err = self._run(args)
        found = self.classify(err)
        if rc != 0 or found:
            code, fix = found or ('sacctmgr_failed', 'see the message')
            raise SacctmgrError(code, 'sacctmgr %s: %s' % (' '.join(args), (err or out).strip()), fix)
        rows = []
        for line in out.splitlines():
            if not line.strip():
                continue
            cells = line.split('|')
            # -P ends each line with '|' on some releases; keep exactly len(fields)
            rows.append((cells + [''] * len(fields))[:len(fields)])
        return rows

    def write(self, args):
        """`sacctmgr -i ARGS`. sacctmgr exits 1 both for errors and for 'nothing to
        do', and 0 for some refusals (running jobs, a default account) that it
        prints on stderr. Its stdout echoes the request (descriptions included),
        so stdout is read only after a non-zero exit."""
        rc, out, err = self._run(['-i'] + args)
        found = self.classify(err)
        if found is None and rc != 0:
            found = self.classify(out)
            if found is None and NOTHING.search(out):
                return out
            found = found or ('sacctmgr_failed', 'see the message')
        if found:
            raise SacctmgrError(found[0], 'sacctmgr %s: %s' % (' '.join(args), ' '.join((out + '\n' + err).split())),
                                found[1])
        return out


# --- normalising ---------------------------------------------------------------

_MEM_UNITS = dict(K=1.0 / 1024, M=1, G=1024, T=1024 ** 2, P=1024 ** 3)


def norm_tres(value, what='TRES'):
    """'mem=64G,gres/gpu=2' or {'gres/gpu': 2, 'mem': '65536M'} -> {'gres/gpu': 2, 'mem': 65536} (mem in MB).

    -1 means no limit and drops the entry; None stays None (not managed).
    """
    if value is None:
        return None
    if isinstance(value, dict):
        items = list(value.items())
    else:
        text = str(value).strip()
        items = [part.split('=', 1) for part in text.split(',') if part.strip()] if text else []
    out = {}
    for item in items:
        if len(item) != 2:
            raise SacctmgrError('bad_value', "%s: '%s' is not NAME=COUNT" % (what, '='.join(item)),
                                'write TRES as type=count, e.g. gres/gpu=8,cpu=256,mem=1T')
        name, count = str(item[0]).strip().lower(), check_value(what, item[1]).strip()
        if count in ('-1', ''):
            continue
        if name == 'mem':
            m = re.match(r'^(\d+(?:\.\d+)?)([KMGTP]?)B?$', count, re.I)
            if not m:
                raise SacctmgrError('bad_value', "%s: mem=%s is not a size" % (what, count), 'write it like 64G or 65536M')
            out[name] = int(round(float(m.group(1)) * _MEM_UNITS[(m.group(2) or 'M').upper()]))
        else:
            if not re.match(r'^\d+$', count):
                raise SacctmgrError('bad_value', '%s: %s=%s is not a count' % (what, name, count),
                                    'give a whole number, or -1 for no limit')
            out[name] = int(count)
    return out


def tres_text(tres):
    return ','.join('%s=%s' % (k, ('%dM' % v) if k == 'mem' else v) for k, v in sorted(tres.items()))


def norm_duration(value, what='duration'):
    """Minutes from minutes (int), 'MM', 'MM:SS', 'HH:MM:SS', 'D-HH[:MM[:SS]]'; -1 for -1 / UNLIMITED / ''."""
    if value is None:
        return None
    text = str(value).strip()
    if text in ('', '-1') or text.upper() in ('UNLIMITED', 'INFINITE'):
        return -1
    m = re.match(r'^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$', text)
    if not m:
        raise SacctmgrError('bad_value', "%s: '%s' is not a duration" % (what, text),
                            'write minutes, HH:MM:SS or D-HH:MM:SS, or -1 for no limit')
    days, a, b, c = m.groups()
    if days is None and b is None:
        return int(a)  # plain minutes
    hours, minutes, seconds = int(a), int(b or 0), int(c or 0)
    if days is None and c is None:
        # MM:SS per Slurm's time format
        hours, minutes, seconds = 0, int(a), int(b)
    total = int(days or 0) * 1440 + hours * 60 + minutes
    return total + (1 if seconds else 0)


def duration_text(minutes):
    return '-1' if minutes == -1 else '%d-%02d:%02d:00' % (minutes // 1440, minutes % 1440 // 60, minutes % 60)


def normalise(kind, value, what):
    """Wanted or read value -> comparable form. None means 'not managed' for wanted values."""
    if value is None:
        return None
    if kind == 'tres':
        return norm_tres(value, what)
    if kind == 'duration':
        return norm_duration(value, what)
    if kind == 'set':
        items = value if isinstance(value, (list, tuple, set, frozenset)) else str(value).split(',')
        return frozenset(check_value(what, x).strip().lower() for x in items if str(x).strip())
    if kind in ('int', 'share'):
        text = check_value(what, value).strip()
        if kind == 'share' and text.lower() == 'parent':
            return 'parent'
        if text in ('', '-1'):
            return -1
        try:
            return int(text)
        except ValueError:
            raise SacctmgrError('bad_value', "%s: '%s' is not a whole number" % (what, text),
                                'give a whole number, or -1 for no limit')
    if kind == 'float':
        text = check_value(what, value).strip()
        return float(text) if text else 1.0
    if kind == 'text':
        # sacctmgr stores descriptions and organizations in lower case, quotes as backticks
        return slurm_text(check_value(what, value))
    if kind == 'name':
        text = check_value(what, value).strip()
        return entity_name(what, text) if text else ''
    if kind == 'admin':
        text = check_value(what, value).strip().lower()
        return {'': 'none', 'administrator': 'administrator', 'admin': 'administrator',
                'operator': 'operator', 'none': 'none'}.get(text, text)
    return check_value(what, value).strip()


def write_text(kind, value):
    """A wanted value as sacctmgr takes it (TRES are written by set_clause)."""
    if kind == 'duration':
        return duration_text(value)
    if kind == 'set':
        return ','.join(sorted(value))
    if kind == 'float':
        return ('%f' % value).rstrip('0').rstrip('.')
    return str(value)


def set_clause(fields, changes, current=None, adding=False):
    """['key=value', ...] for the changed fields; TRES entries no longer wanted get -1.

    An empty list clears: flags=-1 (str_2_qos_flags), qos= and preempt= (an
    empty name list). A new entity has nothing to clear: no key is sent.
    """
    out = []
    for name in sorted(changes):
        read_name, key, kind = fields[name]
        value = changes[name]
        if kind == 'set' and not value:
            if not adding:
                out.append('%s=%s' % (key, '-1' if key == 'flags' else ''))
        elif kind == 'tres':
            gone = sorted(set((current or {}).get(name) or {}) - set(value))
            parts = [tres_text(value)] if value else []
            parts += ['%s=-1' % k for k in gone]
            out.append('%s=%s' % (key, ','.join(p for p in parts if p) or '-1'))
        else:
            out.append('%s=%s' % (key, write_text(kind, value)))
    return out


# --- reading -------------------------------------------------------------------

def read_state(runner, cluster=None, kinds=('qos', 'accounts', 'users'), need_tres=False):
    """What sacctmgr holds, normalised: at most six invocations whatever the size."""
    state = dict(cluster=None, tres=None, qos={}, accounts={}, users={}, assocs={})
    if 'accounts' in kinds or 'users' in kinds:
        clusters = [row[0] for row in runner.read('cluster', ['Cluster'])]
        if cluster is None:
            if len(clusters) != 1:
                raise SacctmgrError('cluster_not_registered' if not clusters else 'cluster_ambiguous',
                                    'no cluster is registered with slurmdbd' if not clusters else
                                    'slurmdbd knows several clusters (%s)' % ', '.join(clusters),
                                    'start slurmctld once so it registers the cluster' if not clusters else
                                    'give cluster')
            cluster = clusters[0]
        elif cluster not in clusters:
            raise SacctmgrError('cluster_not_registered', "cluster '%s' is not registered with slurmdbd (known: %s)"
                                % (cluster, ', '.join(clusters) or 'none'),
                                'start slurmctld of that cluster once (it registers itself), or correct cluster')
        state['cluster'] = cluster
    if need_tres:
        state['tres'] = set(('%s/%s' % (t, n) if n else t).lower() for t, n in runner.read('tres', ['Type', 'Name']))
    qos_fields = sorted(QOS_FIELDS)
    for row in runner.read('qos', ['Name'] + [QOS_FIELDS[f][0] for f in qos_fields]):
        state['qos'][row[0]] = dict((f, normalise(QOS_FIELDS[f][2], v, 'qos %s %s' % (row[0], f)))
                                    for f, v in zip(qos_fields, row[1:]))
    if 'accounts' in kinds or 'users' in kinds:
        for name, descr, org in runner.read('account', ['Account', 'Description', 'Organization']):
            state['accounts'][name] = dict(description=normalise('text', descr, name), organization=normalise('text', org, name))
        assoc_fields = sorted(ASSOC_FIELDS)
        rows = runner.read('assoc', ['Account', 'User', 'Partition', 'ParentName'] +
                           [ASSOC_FIELDS[f][0] for f in assoc_fields],
                           where=['where', 'cluster=' + cluster], options=['WOPLimits'])
        for row in rows:
            account, user, partition, parent = row[:4]
            if partition:
                continue  # partition-specific associations are not managed here
            values = dict((f, normalise(ASSOC_FIELDS[f][2], v, 'association %s/%s %s' % (account, user, f)))
                          for f, v in zip(assoc_fields, row[4:]))
            values['parent'] = parent or None
            state['assocs'][(account, user)] = values
    if 'users' in kinds:
        for name, default, admin in runner.read('user', ['User', 'DefaultAccount', 'AdminLevel']):
            state['users'][name] = dict(default_account=default, admin_level=normalise('admin', admin, name))
    return state


# --- planning --------------------------------------------------------------------

class Plan:
    """Commands in the order they must run, with what each changes."""

    def __init__(self):
        self.steps = []  # (args, [entity labels])
        self.changes = []  # {kind, name, action, fields}
        self.before = dict(qos={}, accounts={}, users={})
        self.after = dict(qos={}, accounts={}, users={})

    def add(self, args, labels):
        self.steps.append((args, labels))


def _batch(plan, groups, make_args):
    """One command per group of entities that need the same change."""
    for key in sorted(groups, key=repr):
        names = sorted(groups[key])
        plan.add(make_args(','.join(names), key), names)


def _wanted_fields(entity, fields, what):
    return dict((f, normalise(fields[f][2], entity.get(f), '%s %s' % (what, f)))
                for f in fields if entity.get(f) is not None)


def _changed(wanted, current):
    return dict((f, v) for f, v in wanted.items() if current.get(f) != v)


def _show(values):
    """Comparable values as a person reads them (for diff and changes)."""
    out = {}
    for k, v in sorted(values.items()):
        if isinstance(v, frozenset):
            v = sorted(v)
        elif isinstance(v, dict):
            v = tres_text(v)
        out[k] = v
    return out


def _check_refs(state, present_qos, entity, what):
    for field in ('qos', 'default_qos'):
        value = entity.get(field)
        if value is None:
            continue
        names = value if isinstance(value, frozenset) else frozenset([value]) if value else frozenset()
        unknown = sorted(n for n in names if n not in state['qos'] and n not in present_qos)
        if unknown:
            raise SacctmgrError('unknown_qos', "%s: QoS %s in %s do(es) not exist" % (what, ', '.join(unknown), field),
                                'add the QoS first (slurm_accounting_qos / sacctmgr_qos), or correct %s' % field)


def _check_tres(state, values, what):
    if state['tres'] is None:
        return
    for field, value in values.items():
        if isinstance(value, dict):
            for name in value:
                if name not in state['tres']:
                    fix = ('add %s to AccountingStorageTRES in slurm.conf (slurm_conf_extra) and restart slurmctld; '
                           'slurmctld must have registered with slurmdbd since' % name)
                    raise SacctmgrError('unknown_tres', "%s: %s names TRES '%s', which slurmdbd does not know"
                                        % (what, field, name), fix)


def plan_qos(plan, state, qos, purge):
    adds, mods, dels = {}, {}, []
    for q in qos:
        name = q['name']  # checked by _names()
        current = state['qos'].get(name)
        if q.get('state', 'present') == 'absent':
            if name in PROTECTED_QOS:
                raise SacctmgrError('protected', "qos %s: the QoS '%s' cannot be removed" % (name, name),
                                    'keep it (Slurm needs it)')
            if current is not None:
                dels.append(name)
                plan.before['qos'][name] = _show(current)
            continue
        wanted = _wanted_fields(q, QOS_FIELDS, 'qos %s' % name)
        _check_tres(state, wanted, 'qos %s' % name)
        if current is None:
            key = tuple(set_clause(QOS_FIELDS, wanted, adding=True))
            adds.setdefault(key, []).append(name)
            plan.after['qos'][name] = _show(wanted)
            plan.changes.append(dict(kind='qos', name=name, action='add', fields=_show(wanted)))
            continue
        changes = _changed(wanted, current)
        if changes:
            key = tuple(set_clause(QOS_FIELDS, changes, current))
            mods.setdefault(key, []).append(name)
            plan.before['qos'][name] = _show(dict((f, current.get(f)) for f in changes))
            plan.after['qos'][name] = _show(changes)
            plan.changes.append(dict(kind='qos', name=name, action='modify', fields=_show(changes)))
    if purge:
        listed = set(q['name'] for q in qos)
        for name in sorted(state['qos']):
            if name not in listed and name not in PROTECTED_QOS:
                dels.append(name)
                plan.before['qos'][name] = _show(state['qos'][name])
    _batch(plan, adds, lambda names, key: ['add', 'qos', 'name=' + names] + list(key))
    _batch(plan, mods, lambda names, key: ['modify', 'qos', 'where', 'name=' + names, 'set'] + list(key))
    for name in dels:
        plan.changes.append(dict(kind='qos', name=name, action='delete', fields={}))
    return sorted(set(dels))


def _depths(accounts, state):
    """Depth of each wanted account below root; parents must exist or be wanted."""
    parents = dict((a['name'], a.get('parent') or 'root') for a in accounts if a.get('state', 'present') == 'present')
    depth = {}

    def walk(name, seen):
        if name in depth:
            return depth[name]
        if name in seen:
            raise SacctmgrError('parent_cycle', 'account %s: its parents form a cycle (%s)'
                                % (name, ' -> '.join(seen + [name])), 'correct parent')
        parent = parents[name]
        if parent in parents:
            depth[name] = walk(parent, seen + [name]) + 1
        elif parent == 'root' or (parent, '') in state['assocs']:
            depth[name] = 1
        else:
            raise SacctmgrError('parent_missing', "account %s: the parent account '%s' does not exist in cluster %s"
                                % (name, parent, state['cluster']),
                                'add %s first (list it before or with %s), or correct parent' % (parent, name))
        return depth[name]

    for name in parents:
        walk(name, [])
    return depth


def _ancestors(accounts, state):
    """Every account above a wanted one, through the wanted parents first and
    the parents slurmdbd holds above them."""
    parent = dict((name, values.get('parent')) for (name, user), values in state['assocs'].items() if not user)
    parent.update((a['name'], a.get('parent') or 'root') for a in accounts if a.get('state', 'present') == 'present')
    keep = set()
    for a in accounts:
        if a.get('state', 'present') != 'present':
            continue
        name = parent.get(a['name'])
        while name and name not in keep:
            keep.add(name)
            name = parent.get(name)
    return keep


def plan_accounts(plan, state, accounts, purge, present_qos):
    cluster = state['cluster']
    depth = _depths(accounts, state)
    levels = {}
    acct_mods, assoc_mods, moves, dels = {}, {}, {}, []
    for a in accounts:
        name = a['name']  # checked by _names()
        label = 'account %s' % name
        exists = (name, '') in state['assocs']
        if a.get('state', 'present') == 'absent':
            if name in PROTECTED_ACCOUNTS:
                raise SacctmgrError('protected', "%s: the account 'root' cannot be removed" % label, 'keep it')
            if exists:
                dels.append(name)
                plan.before['accounts'][name] = _show(state['assocs'][(name, '')])
            continue
        parent = a.get('parent') or 'root'
        assoc = _wanted_fields(a, ASSOC_FIELDS, label)
        info = _wanted_fields(a, ACCOUNT_FIELDS, label)
        _check_refs(state, present_qos, assoc, label)
        _check_tres(state, assoc, label)
        if not exists:
            key = (parent, tuple(set_clause(ACCOUNT_FIELDS, info, adding=True) +
                                 set_clause(ASSOC_FIELDS, assoc, adding=True)))
            levels.setdefault(depth[name], {}).setdefault(key, []).append(name)
            after = dict(assoc, **info)
            after['parent'] = parent
            plan.after['accounts'][name] = _show(after)
            plan.changes.append(dict(kind='account', name=name, action='add', fields=_show(after)))
            continue
        current = state['assocs'][(name, '')]
        info_changes = _changed(info, state['accounts'].get(name, {}))
        assoc_changes = _changed(assoc, current)
        if info_changes:
            acct_mods.setdefault(tuple(set_clause(ACCOUNT_FIELDS, info_changes)), []).append(name)
        if assoc_changes:
            assoc_mods.setdefault(tuple(set_clause(ASSOC_FIELDS, assoc_changes, current)), []).append(name)
        if current.get('parent') != parent and name not in PROTECTED_ACCOUNTS:
            moves.setdefault(depth[name], {}).setdefault(parent, []).append(name)
            assoc_changes['parent'] = parent
        changes = dict(info_changes, **assoc_changes)
        if changes:
            before = dict(state['accounts'].get(name, {}), **current)
            plan.before['accounts'][name] = _show(dict((f, before.get(f)) for f in changes))
            plan.after['accounts'][name] = _show(changes)
            plan.changes.append(dict(kind='account', name=name, action='modify', fields=_show(changes)))
    if purge:
        listed = set(a['name'] for a in accounts)
        # Deleting an account deletes its subtree: never an ancestor of one that stays.
        keep = _ancestors(accounts, state)
        for (name, user) in sorted(state['assocs']):
            if not user and name not in listed and name not in keep and name not in PROTECTED_ACCOUNTS:
                dels.append(name)
                plan.before['accounts'][name] = _show(state['assocs'][(name, '')])
    where = ['cluster=' + cluster]
    for level in sorted(levels):
        _batch(plan, levels[level],
               lambda names, key: ['add', 'account', 'name=' + names] + where + ['parent=' + key[0]] + list(key[1]))
    for level in sorted(moves):
        _batch(plan, moves[level], lambda names, parent: ['modify', 'account', 'where', 'name=' + names] + where +
               ['set', 'parent=' + parent])
    _batch(plan, acct_mods, lambda names, key: ['modify', 'account', 'where', 'name=' + names, 'set'] + list(key))
    _batch(plan, assoc_mods, lambda names, key: (['modify', 'account', 'where', 'name=' + names] + where +
                                                 ['set'] + list(key)))
    for name in dels:
        plan.changes.append(dict(kind='account', name=name, action='delete', fields={}))
    return sorted(set(dels))


def plan_users(plan, state, users, purge, present_qos, present_accounts):
    cluster = state['cluster']
    where = ['cluster=' + cluster]
    adds, assoc_adds, assoc_dels, user_mods, assoc_mods, dels = {}, {}, {}, {}, {}, []
    for u in users:
        name = u['name']  # checked by _names()
        label = 'user %s' % name
        mine = dict((acct, v) for (acct, user), v in state['assocs'].items() if user == name)
        if u.get('state', 'present') == 'absent':
            if name in PROTECTED_USERS:
                raise SacctmgrError('protected', "%s: the user 'root' cannot be removed" % label, 'keep it')
            gone = sorted(set(u.get('accounts') or []) & set(mine)) if u.get('accounts') else sorted(mine)
            if gone and set(gone) == set(mine):
                dels.append(name)
            for acct in gone if set(gone) != set(mine) else []:
                assoc_dels.setdefault(acct, []).append(name)
            if gone:
                plan.before['users'][name] = dict(accounts=sorted(mine))
                plan.after['users'][name] = dict(accounts=sorted(set(mine) - set(gone)))
                plan.changes.append(dict(kind='user', name=name, action='delete',
                                         fields=dict(accounts=gone)))
            continue
        default = u.get('default_account')
        if not default:
            raise SacctmgrError('bad_value', '%s: default_account is required' % label,
                                'give default_account (the account jobs are charged to by default)')
        wanted_accounts = sorted(set([default] + list(u.get('accounts') or [])))
        for acct in wanted_accounts:
            if (acct, '') not in state['assocs'] and acct not in present_accounts:
                raise SacctmgrError('account_missing', "%s: account '%s' does not exist in cluster %s"
                                    % (label, acct, cluster), 'add the account first (slurm_accounting_accounts)')
        info = _wanted_fields(u, USER_FIELDS, label)
        assoc = _wanted_fields(u, ASSOC_FIELDS, label)
        _check_refs(state, present_qos, assoc, label)
        _check_tres(state, assoc, label)
        current_info = state['users'].get(name)
        if current_info is None or not mine:
            settings = (set_clause(USER_FIELDS, dict(info, default_account=default), adding=True) +
                        set_clause(ASSOC_FIELDS, assoc, adding=True))
            key = (tuple(wanted_accounts), default, tuple(settings))
            adds.setdefault(key, []).append(name)
            after = dict(assoc, **info)
            after['accounts'] = wanted_accounts
            plan.after['users'][name] = _show(after)
            plan.changes.append(dict(kind='user', name=name, action='add', fields=_show(after)))
            continue
        changes = {}
        missing = [a for a in wanted_accounts if a not in mine]
        extra = sorted(a for a in mine if a not in wanted_accounts) if u.get('accounts') is not None else []
        if missing:
            assoc_adds.setdefault((tuple(missing), tuple(set_clause(ASSOC_FIELDS, assoc, adding=True))),
                                  []).append(name)
        for acct in extra:
            assoc_dels.setdefault(acct, []).append(name)
        if missing or extra:
            changes['accounts'] = wanted_accounts
        info_changes = _changed(info, current_info)
        if info_changes:
            user_mods.setdefault(tuple(set_clause(USER_FIELDS, info_changes)), []).append(name)
            changes.update(info_changes)
        # association fields on the associations the user keeps
        kept = [a for a in wanted_accounts if a in mine]
        assoc_changes = {}
        for acct in kept:
            assoc_changes.update(_changed(assoc, mine[acct]))
        if assoc_changes:
            assoc_mods.setdefault(tuple(set_clause(ASSOC_FIELDS, assoc_changes, mine[kept[0]])), []).append(name)
            changes.update(assoc_changes)
        if changes:
            before = dict(current_info, accounts=sorted(mine))
            for f in assoc_changes:
                before[f] = mine[kept[0]].get(f)
            plan.before['users'][name] = _show(dict((f, before.get(f)) for f in changes))
            plan.after['users'][name] = _show(changes)
            plan.changes.append(dict(kind='user', name=name, action='modify', fields=_show(changes)))
    if purge:
        listed = set(u['name'] for u in users)
        for name in sorted(set(user for (acct, user) in state['assocs'] if user)):
            if name not in listed and name not in PROTECTED_USERS:
                dels.append(name)
                plan.before['users'][name] = dict(accounts=sorted(a for (a, us) in state['assocs'] if us == name))
                plan.changes.append(dict(kind='user', name=name, action='delete', fields={}))
    _batch(plan, adds, lambda names, key: (['add', 'user', 'name=' + names] + where +
                                           ['account=' + ','.join(key[0])] + list(key[2])))
    _batch(plan, assoc_adds, lambda names, key: (['add', 'user', 'name=' + names] + where +
                                                 ['account=' + ','.join(key[0])] + list(key[1])))
    _batch(plan, user_mods, lambda names, key: ['modify', 'user', 'where', 'name=' + names, 'set'] + list(key))
    _batch(plan, assoc_mods, lambda names, key: ['modify', 'user', 'where', 'name=' + names] + where +
           ['set'] + list(key))
    _batch(plan, assoc_dels, lambda names, acct: ['delete', 'user', 'where', 'name=' + names, 'account=' + acct] +
           where)
    return sorted(set(dels))


def _names(entities, kind, keep_case=False):
    """The entities with their names as Slurm stores them; two that Slurm would
    store as one are refused."""
    out, seen = [], {}
    for index, entity in enumerate(entities or []):
        name = entity_name('%s[%d] name' % (kind, index), entity.get('name'), keep_case)
        if name in seen:
            hint = '' if keep_case or kind != 'users' else (
                ' (Slurm lower-cases user names unless slurmdbd.conf has Parameters=PreserveCaseUser)')
            raise SacctmgrError('duplicate', '%s[%d] %r and %s[%d] %r are the same Slurm %s %r%s'
                                % (kind, seen[name][0], seen[name][1], kind, index, entity.get('name'),
                                   kind.rstrip('s'), name, hint), 'list it once')
        seen[name] = (index, entity.get('name'))
        out.append(dict(entity, name=name))
    return out


def plan_all(state, qos=None, accounts=None, users=None, purge=False, preserve_case_user=False):
    """The whole change: QoS, then accounts (parents first), then users; removals in reverse.

    Names are compared as Slurm stores them: QoS and account names in lower
    case, user names too unless preserve_case_user (PreserveCaseUser).
    """
    plan = Plan()
    qos = _names(qos, 'qos')
    accounts = [dict(a, parent=entity_name('account %s parent' % a['name'], a['parent']) if a.get('parent') else None)
                for a in _names(accounts, 'accounts')]
    users = [dict(u, default_account=entity_name('user %s default_account' % u['name'], u['default_account'])
                  if u.get('default_account') else None,
                  accounts=[entity_name('user %s accounts' % u['name'], x) for x in u['accounts']]
                  if u.get('accounts') is not None else None)
             for u in _names(users, 'users', preserve_case_user)]
    present_qos = set(q['name'] for q in qos if q.get('state', 'present') == 'present')
    present_accounts = set(a['name'] for a in accounts if a.get('state', 'present') == 'present')
    # only the kinds given are managed (and purged)
    qos_dels = plan_qos(plan, state, qos, purge) if qos else []
    account_dels = plan_accounts(plan, state, accounts, purge, present_qos) if accounts else []
    user_dels = plan_users(plan, state, users, purge, present_qos, present_accounts) if users else []
    cluster = ['cluster=' + state['cluster']] if state['cluster'] else []
    if user_dels:
        plan.add(['delete', 'user', 'where', 'name=' + ','.join(user_dels)] + cluster, user_dels)
    if account_dels:
        plan.add(['delete', 'account', 'where', 'name=' + ','.join(account_dels)] + cluster, account_dels)
    if qos_dels:
        plan.add(['delete', 'qos', 'where', 'name=' + ','.join(qos_dels)], qos_dels)
    return plan


def apply(runner, plan):
    """Run the plan's commands in order; on a failure say what was applied and what was not."""
    done = []
    for index, (args, dummy) in enumerate(plan.steps):
        try:
            runner.write(args)
        except SacctmgrError as e:
            e.applied = done
            e.not_applied = [' '.join(a) for a, dummy in plan.steps[index:]]
            raise
        done.append(' '.join(args))
    return done


# --- the modules' common part ---------------------------------------------------------

STATE = dict(type='str', default='present', choices=['present', 'absent'])
ASSOC_OPTIONS = dict(
    fairshare=dict(type='raw'),
    qos=dict(type='list', elements='str'),
    default_qos=dict(type='str'),
    grp_tres=dict(type='raw'),
    grp_jobs=dict(type='int'),
    grp_submit_jobs=dict(type='int'),
    max_tres_per_job=dict(type='raw'),
    max_jobs=dict(type='int'),
    max_submit_jobs=dict(type='int'),
    max_wall=dict(type='raw'),
)
QOS_OPTIONS = dict(
    name=dict(type='str'),
    state=STATE,
    description=dict(type='str'),
    priority=dict(type='int'),
    flags=dict(type='list', elements='str'),
    usage_factor=dict(type='float'),
    grp_tres=dict(type='raw'),
    grp_jobs=dict(type='int'),
    max_tres_per_user=dict(type='raw'),
    max_tres_per_job=dict(type='raw'),
    max_jobs_per_user=dict(type='int'),
    max_submit_jobs_per_user=dict(type='int'),
    max_wall=dict(type='raw'),
    preempt=dict(type='list', elements='str'),
)
ACCOUNT_OPTIONS = dict(ASSOC_OPTIONS, name=dict(type='str'), state=STATE, parent=dict(type='str'),
                       description=dict(type='str'), organization=dict(type='str'))
USER_OPTIONS = dict(ASSOC_OPTIONS, name=dict(type='str'), state=STATE, default_account=dict(type='str'),
                    accounts=dict(type='list', elements='str'),
                    admin_level=dict(type='str', choices=['none', 'operator', 'administrator']))
COMMON_OPTIONS = dict(
    purge=dict(type='bool', default=False),
    preserve_case_user=dict(type='bool'),
    slurmdbd_conf=dict(type='path', default='/etc/slurm/slurmdbd.conf'),
    cluster=dict(type='str'),
    timeout=dict(type='int', default=60),
)


def preserve_case_user(path):
    """Whether slurmdbd.conf at ``path`` sets PreserveCaseUser in Parameters, read
    as slurmdbd reads it (a case-insensitive search in the value); False when
    the file cannot be read."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except (IOError, OSError):
        return False
    for line in lines:
        m = re.match(r'^\s*Parameters\s*=\s*(\S+)', line.split('#', 1)[0], re.I)
        if m and 'preservecaseuser' in m.group(1).lower():
            return True
    return False


def entities(module, list_key, spec):
    """The list option's items, each checked against the entity spec (name required)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    item_spec = dict(spec, name=dict(type='str', required=True))
    validator = ArgumentSpecValidator(item_spec)
    out = []
    for index, item in enumerate(module.params.get(list_key) or []):
        result = validator.validate(item)
        if result.error_messages:
            module.fail_json(msg='%s[%d] (%s): %s'
                             % (list_key, index, item.get('name', '?'), '; '.join(result.error_messages)))
        out.append(result.validated_parameters)
    return out


def single(module, spec):
    """The top-level options as one entity, when name is given."""
    if not module.params.get('name'):
        return []
    return [dict((k, module.params.get(k)) for k in spec)]


def run(module, qos=None, accounts=None, users=None):
    """Read, plan, apply (not in check mode) and exit the module."""
    p = module.params
    runner = Runner(module.get_bin_path('sacctmgr', required=True), p['timeout'])
    kinds = [k for k, v in (('qos', qos), ('accounts', accounts), ('users', users)) if v is not None]
    wanted = (qos or []) + (accounts or []) + (users or [])
    need_tres = any(e.get(f) is not None for e in wanted
                    for f in ('grp_tres', 'max_tres_per_user', 'max_tres_per_job'))
    try:
        state = read_state(runner, p.get('cluster'), kinds, need_tres)
        keep_case = p.get('preserve_case_user')
        if keep_case is None:
            keep_case = preserve_case_user(p['slurmdbd_conf'])
        plan = plan_all(state, qos, accounts, users, p['purge'], keep_case)
        commands = [' '.join(args) for args, dummy in plan.steps]
        if not module.check_mode:
            apply(runner, plan)
    except SacctmgrError as e:
        module.fail_json(msg='%s (fix: %s)' % (e.message, e.fix), code=e.code,
                         applied=e.applied, not_applied=e.not_applied,
                         sacctmgr_calls=runner.calls)
    result = dict(changed=bool(plan.steps), changes=plan.changes, commands=commands,
                  sacctmgr_calls=runner.calls, cluster=state['cluster'])
    if module._diff and plan.steps:
        result['diff'] = dict(before=plan.before, after=plan.after)
    module.exit_json(**result)


def _set_only(values):
    """Fields that are set (not -1 / empty), as a person reads them."""
    return _show(dict((k, v) for k, v in values.items() if v not in (-1, None, {}, frozenset(), '')))


def facts(state):
    """read_state() as plain data: qos, accounts, users (for sacctmgr_info)."""
    accounts, users = {}, {}
    for (account, user), values in sorted(state['assocs'].items()):
        if user:
            entry = users.setdefault(user, dict(state['users'].get(user, {}), accounts={}))
            entry['accounts'][account] = _set_only(dict((k, v) for k, v in values.items() if k != 'parent'))
        else:
            accounts[account] = dict(state['accounts'].get(account, {}), **_set_only(values))
    return dict(cluster=state['cluster'], accounts=accounts, users=users,
                qos=dict((name, _set_only(values)) for name, values in state['qos'].items()))
