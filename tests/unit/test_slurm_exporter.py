"""The slurm exporter (roles/slurm_exporter/files/gpuhpc_slurm_exporter.py) on
Slurm output captured in the lab with a known job mix
(tests/unit/fixtures/slurm_exporter/capture.sh): vic runs a 1-GPU job and
waits with a 2-GPU one (AssocGrpGRES), nora runs a 1-GPU job in QoS gpu1 and
waits with a second (QOSMaxGRESPerUser); two nodes of two GPUs."""
import glob
import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'roles', 'slurm_exporter', 'files', 'gpuhpc_slurm_exporter.py')
FIXTURES = sorted(glob.glob(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'slurm_exporter', '*.json')))

spec = importlib.util.spec_from_file_location('gpuhpc_slurm_exporter', SCRIPT)
exporter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(exporter)


@pytest.fixture(params=FIXTURES, ids=lambda p: os.path.basename(p)[:-5])
def capture(request):
    with open(request.param) as f:
        return json.load(f)


class Replay:
    """subprocess.run stand-in that answers from a capture."""

    def __init__(self, capture, broken=()):
        self.capture, self.broken, self.calls = capture, broken, []

    def __call__(self, argv, **kwargs):
        self.calls.append(argv)
        name = next(n for n, c in self.capture['commands'].items() if c['argv'] == argv)
        if name in self.broken:
            raise subprocess.TimeoutExpired(argv, kwargs.get('timeout'))
        c = self.capture['commands'][name]
        return subprocess.CompletedProcess(argv, c['rc'], c['stdout'], c['stderr'])


def values(families):
    out = {}
    for f in families:
        for labels, value in f.values:
            out[(f.name,) + tuple(labels)] = value
    return out


def test_the_capture_is_what_the_exporter_runs(capture):
    assert {n: c['argv'] for n, c in capture['commands'].items()} == exporter.COMMANDS


def test_the_known_job_mix(capture):
    run = Replay(capture)
    results, status = exporter.scrape(5, run=run)
    assert len(run.calls) == len(exporter.COMMANDS)  # a fixed number of commands per scrape
    assert all(ok for ok, dummy in status.values())
    m = values(exporter.metrics_from(results))
    assert m[('slurm_gpus_total',)] == 4
    assert m[('slurm_gpus_alloc',)] == 2
    assert m[('slurm_gpus_idle',)] == 2
    assert m[('slurm_queue_running',)] == 2 and m[('slurm_queue_pending',)] == 2
    assert m[('slurm_jobs_pending', 'gpu', 'AssocGrpGRES')] == 1
    assert m[('slurm_jobs_pending', 'gpu', 'QOSMaxGRESPerUser')] == 1
    assert m[('slurm_account_gpus_running', 'vision')] == 1
    assert m[('slurm_account_gpus_running', 'nlp')] == 1
    assert m[('slurm_user_gpus_running', 'vic', 'vision')] == 1
    assert m[('slurm_gpus_pending', 'gpu')] == 3
    assert m[('slurm_partition_gpus_total', 'gpu')] == 4
    assert m[('slurm_scheduler_dbd_queue_size',)] == 0
    assert sum(v for k, v in m.items() if k[0] == 'slurm_node_gpus_total') == 4


def test_a_failing_command_leaves_its_metrics_out(capture):
    errors = exporter.Counter()
    results, status = exporter.scrape(5, run=Replay(capture, broken=('squeue',)), errors=errors)
    assert status['squeue'][0] is False and errors['squeue'] == 1
    names = set(f.name for f in exporter.metrics_from(results))
    assert 'slurm_queue_pending' not in names and 'slurm_gpus_total' in names


@pytest.mark.parametrize('text, count', [
    ('gpu:2', 2), ('gpu:h100:8(S:0-1)', 8), ('gpu:1(IDX:0),shard:0', 1), ('(null)', 0), ('gpu:a100:2,gpu:h100:4', 6),
])
def test_gpu_counts(text, count):
    assert exporter.gpu_count(text) == count


@pytest.mark.parametrize('text, count', [
    ('cpu=1,mem=11540M,node=1,billing=1,gres/gpu=2', 2), ('gres/gpu:1', 1), ('gres:gpu:2', 2),
    ('gres/gpu:h100:4', 4), ('N/A', 0),
])
def test_tres_gpus(text, count):
    assert exporter.tres_gpus(text) == count


def test_account_fair_share(capture):
    results, dummy = exporter.scrape(5, run=Replay(capture))
    values = {s.name: dict((labels, v) for labels, v in s.values) for s in exporter.metrics_from(results)}
    # Fair Tree gives accounts no FairShare: the classic factor, 1 for an account that has used nothing
    assert values['slurm_account_fairshare'] == {('research',): 1.0, ('nlp',): 1.0, ('vision',): 1.0}
    assert values['slurm_account_shares_normalized'] == {('research',): 0.5, ('nlp',): 0.4, ('vision',): 0.6}
    assert set(values['slurm_account_usage_raw']) == {('research',), ('nlp',), ('vision',)}


@pytest.mark.parametrize('line, factor', [
    ('vision||60|0.600000|100|0.600000|', 0.5),    # usage equals share
    ('vision||60|0.600000|100|0.000000|', 1.0),    # unused
    ('vision||60|0.600000|100|0.300000|0.25', 0.25),  # classic algorithm: Slurm's own figure
])
def test_account_factor(line, factor):
    assert exporter.parse_sshare(line)['vision']['fairshare'] == pytest.approx(factor)


def test_served_through_prometheus_client(capture):
    from prometheus_client import CollectorRegistry, generate_latest
    registry = CollectorRegistry()
    registry.register(exporter.collector(5, run=Replay(capture, broken=('sshare',))))
    first = generate_latest(registry).decode()
    second = generate_latest(registry).decode()
    assert 'slurm_gpus_alloc 2.0' in first
    assert 'slurm_jobs_pending{partition="gpu",reason="AssocGrpGRES"} 1.0' in first
    assert 'slurm_exporter_command_up{command="sshare"} 0.0' in first
    assert 'slurm_account_fairshare' not in first.replace('# HELP', '')
    assert 'slurm_exporter_command_errors_total{command="sshare"} 1.0' in first
    assert 'slurm_exporter_command_errors_total{command="sshare"} 2.0' in second


def test_backfill_cycle_figures_before_the_first_cycle_read_as_zero():
    out = ('Main schedule statistics (microseconds):\n\tLast cycle:   120\n\tMean cycle:   110\n'
           'Backfilling stats\n\tTotal backfilled jobs (since last slurm start): 0\n\tLast cycle when: N/A\n')
    found = exporter.parse_sdiag(out)
    assert found['last_cycle'] == 120 and found['mean_cycle'] == 110
    assert found['backfill_last_cycle'] == 0 and found['backfill_mean_cycle'] == 0 and found['backfill_depth_mean'] == 0
