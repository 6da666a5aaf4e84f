# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sacctmgr values (part of the sacctmgr modules' code): the fields the modules
manage, and each value as sacctmgr takes and shows it.

normalise() turns a wanted or a read value into one comparable form (TRES
units and order, durations in minutes, lists as sets, -1 as no limit, texts
as sacctmgr stores them); set_clause() writes the changed ones back as
sacctmgr takes them; show() as a person reads them (changes and diff).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import SacctmgrError

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

# What sacctmgr's list parser (slurm_addto_char_list_with_case) splits (',' and
# blanks), takes as a new key ('='), turns into backticks (quotes) or expands as
# a host list ('[...]'); and what its parsable output cannot carry ('|').
BAD_NAME = re.compile(r'[\s,=\'"`\[\]|]')


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


def show(values):
    """Comparable values as a person reads them (for diff and changes)."""
    out = {}
    for k, v in sorted(values.items()):
        if isinstance(v, frozenset):
            v = sorted(v)
        elif isinstance(v, dict):
            v = tres_text(v)
        out[k] = v
    return out
