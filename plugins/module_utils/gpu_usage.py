# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU-hours per account and user from sacct, and the report in CSV, JSON or markdown.

The source is `sacct -a -D -X -n -P -T -S START -E END`: one line per run of
a job allocation (-D: a job requeued after preemption or a node failure has
one record per run, each with its own time), with Start and End truncated to
the window (-T), so a job that ran across the window's edge counts only its
part inside. The seconds are Slurm's ElapsedRaw: truncated to the window,
suspended time taken off. A job that waited in the window and started after
it has a Start after its truncated End, and is not counted. sreport's rollups
would exclude the current hour and count only finished hours.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import datetime
import io
import json
import re

SACCT_FIELDS = ('JobID', 'User', 'Account', 'AllocTRES', 'Start', 'End', 'State', 'ElapsedRaw')


def sacct_args(start, end, cluster=None, accounts=None, users=None):
    args = ['-a', '-D', '-X', '-n', '-P', '-T', '-S', start, '-E', end, '--format=' + ','.join(SACCT_FIELDS)]
    if cluster:
        args += ['-M', cluster]
    if accounts:
        args += ['-A', ','.join(accounts)]
    if users:
        args += ['-u', ','.join(users)]
    return args


# What sacct writes for a time it does not have (not started, still running).
_NO_TIME = ('Unknown', 'None', '')


def _time(text):
    """A time of sacct's default format; None for none. Raises ValueError for
    any other text (a time format set for the caller: SLURM_TIME_FORMAT)."""
    if text.strip() in _NO_TIME:
        return None
    return datetime.datetime.strptime(text.strip(), '%Y-%m-%dT%H:%M:%S')


def tres_count(tres, name):
    m = re.search(r'(?:^|,)%s=(\d+)' % re.escape(name), tres or '')
    return int(m.group(1)) if m else 0


def aggregate(sacct_output, now):
    """Sums per account and per (user, account) from sacct -P lines.

    jobs and gpu_jobs count job ids (a requeued job once); the seconds count
    every run. ``now`` ends a running job's time when sacct gives no ElapsedRaw.
    A line that cannot be read raises ValueError naming it: a row left out
    would be GPU-hours missing from the report, without a word.
    """
    accounts, users, seen = {}, {}, set()
    for number, line in enumerate(sacct_output.splitlines(), 1):
        if not line.strip():
            continue
        cells = line.split('|')
        try:
            if len(cells) != len(SACCT_FIELDS):
                raise ValueError('%d fields, not %d (%s)' % (len(cells), len(SACCT_FIELDS), '|'.join(SACCT_FIELDS)))
            jobid, user, account, tres, start, end, dummy, elapsed = cells
            begin, finish = _time(start), _time(end)
        except ValueError as e:
            raise ValueError('sacct line %d cannot be read: %r: %s' % (number, line, e))
        if begin is None or not tres:
            continue  # never ran (a job cancelled while pending has no AllocTRES)
        if finish is not None and begin > finish:
            continue  # waited in the window, ran after it (-T ends it at the window's end)
        if elapsed.strip().isdigit():
            seconds = int(elapsed)
        else:
            seconds = max(0, int(((finish or now) - begin).total_seconds()))
        gpus = tres_count(tres, 'gres/gpu')
        billing = tres_count(tres, 'billing')
        for key, table in ((account, accounts), ((user, account), users)):
            row = table.setdefault(key, dict(jobs=0, gpu_jobs=0, gpu_seconds=0, billing_seconds=0))
            if (jobid, key) not in seen:
                seen.add((jobid, key))
                row['jobs'] += 1
                row['gpu_jobs'] += 1 if gpus else 0
            row['gpu_seconds'] += gpus * seconds
            row['billing_seconds'] += billing * seconds
    return accounts, users


def rows(accounts, users, price=None):
    """Report rows, most GPU-hours first."""
    def finish(row):
        row['gpu_hours'] = round(row['gpu_seconds'] / 3600.0, 4)
        row['billing_hours'] = round(row['billing_seconds'] / 3600.0, 4)
        if price is not None:
            row['cost'] = round(row['gpu_hours'] * price, 2)
        return row

    by_account = [finish(dict(v, account=k)) for k, v in accounts.items()]
    by_user = [finish(dict(v, user=k[0], account=k[1])) for k, v in users.items()]
    by_account.sort(key=lambda r: (-r['gpu_seconds'], r['account']))
    by_user.sort(key=lambda r: (-r['gpu_seconds'], r['user'], r['account']))
    total = finish(dict(jobs=sum(r['jobs'] for r in by_account), gpu_jobs=sum(r['gpu_jobs'] for r in by_account),
                        gpu_seconds=sum(r['gpu_seconds'] for r in by_account),
                        billing_seconds=sum(r['billing_seconds'] for r in by_account)))
    return by_account, by_user, total


COLUMNS = ('jobs', 'gpu_jobs', 'gpu_hours', 'billing_hours')


def render(fmt, by_account, by_user, total, window, price=None, currency=''):
    """The report as text: csv, json or markdown."""
    columns = COLUMNS + (('cost',) if price is not None else ())
    if fmt == 'json':
        return json.dumps(dict(window=window, price_per_gpu_hour=price, currency=currency, accounts=by_account,
                               users=by_user, total=total), indent=2, sort_keys=True)
    if fmt == 'csv':
        out = io.StringIO()
        writer = csv.writer(out, lineterminator='\n')
        writer.writerow(('scope', 'account', 'user') + columns)
        for r in by_account:
            writer.writerow(('account', r['account'], '') + tuple(r[c] for c in columns))
        for r in by_user:
            writer.writerow(('user', r['account'], r['user']) + tuple(r[c] for c in columns))
        writer.writerow(('total', '', '') + tuple(total[c] for c in columns))
        return out.getvalue()
    head = ['GPU usage %s to %s (source: sacct -D -X -T, every run truncated to the window)' % (window['start'], window['end'])]
    if price is not None:
        head.append('Price per GPU-hour: %s %s' % (price, currency))
    lines = head + ['']
    titles = [c.replace('_', ' ') for c in columns]
    lines += ['| account | ' + ' | '.join(titles) + ' |', '|---|' + '---:|' * len(columns)]
    lines += ['| %s | %s |' % (r['account'], ' | '.join(str(r[c]) for c in columns)) for r in by_account]
    lines += ['| **total** | %s |' % ' | '.join(str(total[c]) for c in columns), '']
    lines += ['| user | account | ' + ' | '.join(titles) + ' |', '|---|---|' + '---:|' * len(columns)]
    lines += ['| %s | %s | %s |' % (r['user'], r['account'], ' | '.join(str(r[c]) for c in columns)) for r in by_user]
    return '\n'.join(lines) + '\n'
