"""GPU-hours from sacct output captured in the lab (tests/unit/fixtures/sacct/capture.sh):
the lab's jobs of the last hour, and root's jobs made by the capture: one requeued while it
ran, one suspended for a while, one waiting for GPUs past the window's end (it ran after it),
one cancelled while it waited, and the job that took every GPU meanwhile. Slurm's own record
of them (sacct -D without -T) is the truth the sums are held against."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import datetime
import glob
import io
import json
import os

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import gpu_usage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'sacct', '*.json')))


def test_there_are_captures_of_both_lab_releases():
    versions = []
    for path in FIXTURES:
        with open(path) as f:
            versions.append(json.load(f)['version'])
    assert any('22.05' in v for v in versions) and any('24.11' in v for v in versions), versions


@pytest.fixture(params=FIXTURES, ids=lambda p: os.path.basename(p)[:-5])
def capture(request):
    with open(request.param) as f:
        data = json.load(f)
    data['now'] = datetime.datetime.strptime(data['now'], '%Y-%m-%dT%H:%M:%S')
    return data


def test_the_capture_is_what_the_module_runs(capture):
    assert capture['args'][:6] == ['-a', '-D', '-X', '-n', '-P', '-T']
    assert capture['args'][-1] == '--format=' + ','.join(gpu_usage.SACCT_FIELDS)


def counted(cells):
    begin, finish = gpu_usage._time(cells[4]), gpu_usage._time(cells[5])
    return begin is not None and cells[3] and not (finish and begin > finish)


def test_sums(capture):
    lines = [line.split('|') for line in capture['output'].splitlines() if line]
    ran = set(c[0] for c in lines if counted(c))
    never = [c for c in lines if gpu_usage._time(c[4]) is None or not c[3]]
    accounts, users = gpu_usage.aggregate(capture['output'], capture['now'])
    assert sum(r['jobs'] for r in accounts.values()) == len(ran)
    assert sum(r['jobs'] for r in users.values()) == len(ran)
    gpu_jobs = set(c[0] for c in lines if counted(c) and 'gres/gpu=' in c[3])
    assert sum(r['gpu_jobs'] for r in accounts.values()) == len(gpu_jobs)
    assert gpu_jobs and never, 'the capture should hold GPU jobs and jobs that never ran'
    # the job that took every GPU (4) ran across the window's end: -T cut it there
    blocker = next(c for c in lines if c[0] == capture['jobs']['blocker'])
    assert gpu_usage.tres_count(blocker[3], 'gres/gpu') == 4
    assert gpu_usage._time(blocker[5]) == capture['now']
    assert int(blocker[7]) == (gpu_usage._time(blocker[5]) - gpu_usage._time(blocker[4])).total_seconds()


def test_requeued_suspended_and_late_jobs_as_slurm_counts_them(capture):
    jobs = capture['jobs']
    truth = [line.split('|') for line in capture['truth'].splitlines() if line]
    runs = dict((name, [t for t in truth if t[0] == job]) for name, job in jobs.items())
    assert len(runs['requeued']) == 2, 'the requeued job has a record per run'
    assert runs['suspended'][0][4] not in ('', '00:00:00'), 'it was suspended'
    ours = [line for line in capture['output'].splitlines()
            if line.split('|')[0] in (jobs['requeued'], jobs['suspended'], jobs['late'], jobs['never'])]
    assert any(line.split('|')[0] == jobs['late'] for line in ours), 'sacct lists the late job in the window'
    accounts, dummy = gpu_usage.aggregate('\n'.join(ours), capture['now'])
    # the late job started after the window: not counted; the other two with every run,
    # each one GPU for Slurm's ElapsedRaw (suspended time off)
    assert accounts['root']['jobs'] == 2
    assert accounts['root']['gpu_seconds'] == sum(int(t[3]) for t in runs['requeued'] + runs['suspended'])
    wall = sum((gpu_usage._time(t[2]) - gpu_usage._time(t[1])).total_seconds() for t in runs['suspended'])
    assert accounts['root']['gpu_seconds'] < sum(int(t[3]) for t in runs['requeued']) + wall


def test_reports(capture):
    accounts, users = gpu_usage.aggregate(capture['output'], capture['now'])
    by_account, by_user, total = gpu_usage.rows(accounts, users, price=2.0)
    assert [r['gpu_seconds'] for r in by_account] == sorted((r['gpu_seconds'] for r in by_account), reverse=True)
    assert total['gpu_seconds'] == sum(r['gpu_seconds'] for r in by_account)
    window = dict(start='a', end='b')
    table = list(csv.reader(io.StringIO(gpu_usage.render('csv', by_account, by_user, total, window, 2.0, 'EUR'))))
    assert table[0] == ['scope', 'account', 'user', 'jobs', 'gpu_jobs', 'gpu_hours', 'billing_hours', 'cost']
    assert table[-1][0] == 'total' and float(table[-1][5]) == total['gpu_hours']
    data = json.loads(gpu_usage.render('json', by_account, by_user, total, window, 2.0, 'EUR'))
    assert data['total']['cost'] == round(total['gpu_hours'] * 2.0, 2)
    markdown = gpu_usage.render('markdown', by_account, by_user, total, window, 2.0, 'EUR')
    assert '| **total** |' in markdown and 'Price per GPU-hour: 2.0 EUR' in markdown
    assert markdown.count('\n| root | root |') == 1


def test_a_running_job_counts_up_to_now():
    line = '7|vic|vision|billing=2,cpu=2,gres/gpu=2,mem=1G,node=1|2026-11-30T10:00:00|Unknown|RUNNING|'
    accounts, dummy = gpu_usage.aggregate(line, datetime.datetime(2026, 11, 30, 10, 30))
    assert accounts['vision']['gpu_seconds'] == 2 * 1800
    assert accounts['vision']['billing_seconds'] == 2 * 1800


@pytest.mark.parametrize('edit', [
    # SLURM_TIME_FORMAT=%s for the caller: epoch seconds
    lambda cells: cells[:4] + ['1764640800'] + cells[5:],
    # a field more or less than the format asks for
    lambda cells: cells + ['x'],
    lambda cells: cells[:-1],
])
def test_a_line_that_cannot_be_read_is_an_error_not_a_row_left_out(capture, edit):
    lines = [line for line in capture['output'].splitlines() if line]
    ran = next(i for i, line in enumerate(lines) if gpu_usage._time(line.split('|')[4]))
    lines[ran] = '|'.join(edit(lines[ran].split('|')))
    with pytest.raises(ValueError, match=r'^sacct line %d cannot be read: ' % (ran + 1)):
        gpu_usage.aggregate('\n'.join(lines) + '\n', capture['now'])
