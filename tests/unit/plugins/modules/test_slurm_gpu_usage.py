"""slurm_gpu_usage runs sacct through command.check(): a stand-in sacct on PATH
(the aggregation is tested on captured output in test_gpu_usage)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
from ansible_collections.gpuhpc.slurm.plugins.modules import slurm_gpu_usage

SACCT = '''#!/bin/sh
sleep "${FAKE_SLEEP:-0}"
[ -n "$FAKE_SACCT_RC" ] && { echo "sacct: error: bad time" >&2; exit "$FAKE_SACCT_RC"; }
echo '1|alice|vision|billing=4,cpu=1,gres/gpu=2,mem=1G,node=1|2026-12-01T10:00:00|2026-12-01T11:00:00|COMPLETED|3600'
'''
ARGS = '-a -D -X -n -P -T -S %s -E now --format=JobID,User,Account,AllocTRES,Start,End,State,ElapsedRaw'


@pytest.fixture(autouse=True)
def sacct(tmp_path, monkeypatch):
    binary = tmp_path / 'sacct'
    binary.write_text(SACCT)
    binary.chmod(0o755)
    monkeypatch.setenv('PATH', '%s%s%s' % (tmp_path, os.pathsep, os.environ.get('PATH', '')))


def test_the_report_comes_from_sacct(run_module):
    result = run_module(slurm_gpu_usage.main, dict(start='2026-12-01', end='2026-12-02'))
    assert result['total']['gpu_hours'] == 2.0
    assert result['accounts'][0]['account'] == 'vision'


def test_sacct_failing_is_named_with_its_exit_status(run_module, monkeypatch):
    monkeypatch.setenv('FAKE_SACCT_RC', '1')
    result = run_module(slurm_gpu_usage.main, dict(start='bad'))
    assert result['failed'] is True
    assert result['msg'] == 'sacct %s failed (rc 1): sacct: error: bad time' % (ARGS % 'bad')
    assert result['fix'] == 'check start/end (sacct time format) and that slurmdbd answers'


def test_sacct_past_its_timeout_is_named_as_such(run_module, monkeypatch):
    monkeypatch.setenv('FAKE_SLEEP', '5')
    result = run_module(slurm_gpu_usage.main, dict(start='2026-12-01', timeout=1))
    assert result['failed'] is True
    assert result['msg'] == 'sacct %s did not finish within 1 s' % (ARGS % '2026-12-01')
    assert result['fix'] == 'check that slurmdbd answers, or raise timeout'
