"""GPU-hours from sacct output captured in the lab (tests/unit/fixtures/sacct/capture.sh),
taken after the lab scenario's jobs ran: GPU jobs of alice (lab), vic (vision) and nora (nlp),
jobs cancelled while pending."""
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
    assert capture['args'][:5] == ['-a', '-X', '-n', '-P', '-T']
    assert capture['args'][-1] == '--format=' + ','.join(gpu_usage.SACCT_FIELDS)


def test_sums(capture):
    lines = [line.split('|') for line in capture['output'].splitlines() if line]
    ran = [c for c in lines if gpu_usage._time(c[4]) is not None and c[3]]
    never = [c for c in lines if gpu_usage._time(c[4]) is None or not c[3]]
    accounts, users = gpu_usage.aggregate(capture['output'], capture['now'])
    assert sum(r['jobs'] for r in accounts.values()) == len(ran)
    assert sum(r['jobs'] for r in users.values()) == len(ran)
    gpu_jobs = [c for c in ran if 'gres/gpu=' in c[3]]
    assert sum(r['gpu_jobs'] for r in accounts.values()) == len(gpu_jobs)
    assert gpu_jobs and never, 'the capture should hold GPU jobs and jobs that never ran'
    # vic's 2-GPU job of 20 s at least
    assert users[('vic', 'vision')]['gpu_seconds'] >= 40


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
    assert markdown.count('\n| vic | vision |') == 1


def test_a_running_job_counts_up_to_now():
    line = '7|vic|vision|billing=2,cpu=2,gres/gpu=2,mem=1G,node=1|2026-11-30T10:00:00|Unknown|RUNNING'
    accounts, dummy = gpu_usage.aggregate(line, datetime.datetime(2026, 11, 30, 10, 30))
    assert accounts['vision']['gpu_seconds'] == 2 * 1800
    assert accounts['vision']['billing_seconds'] == 2 * 1800
