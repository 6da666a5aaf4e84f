"""Parse-and-render time of one slurm exporter scrape on generated Slurm output
shaped like the lab's real output (tests/unit/fixtures/slurm_exporter/), for
1,000 nodes of 8 GPUs and 20,000 jobs; and the Slurm commands per scrape.
Target: under 1 s on one core.
    .venv/bin/python bench/slurm_exporter.py"""
import glob
import importlib.util
import json
import os
import random
import statistics
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location(
    'exporter', os.path.join(ROOT, 'roles', 'slurm_exporter', 'files', 'gpuhpc_slurm_exporter.py'))
exporter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(exporter)
with open(sorted(glob.glob(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'slurm_exporter', '*.json')))[-1]) as f:
    real = json.load(f)['commands']

from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402


class Fixed(object):
    """The exporter's families from parsed output, as its collector yields them."""

    def __init__(self, results):
        self.results = results

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily
        for sample in exporter.metrics_from(self.results):
            fam = GaugeMetricFamily(sample.name, sample.help, labels=list(sample.labels))
            for labels, value in sample.values:
                fam.add_metric(list(labels), value)
            yield fam


rng = random.Random(1)
STATES = ['allocated', 'mixed', 'idle', 'drained', 'down*', 'allocated']
sinfo = '\n'.join('gpu%04d|%s|%s|%d/%d/0/64|gpu:h100:8(S:0-1)|gpu:h100:%d(IDX:0-%d)|%d|1031000|up|'
                  % (n, rng.choice(STATES), 'gpu*' if n < 800 else 'long', a, 64 - a, g, max(g - 1, 0), a * 16000, )
                  for n in range(1000) for a, g in [(rng.randint(0, 64), rng.randint(0, 8))])
REASONS = ['Priority', 'Resources', 'AssocGrpGRES', 'QOSMaxGRESPerUser', 'Dependency']
STATES_JOB = ['RUNNING', 'PENDING', 'PENDING', 'COMPLETED']
lines = []
for j in range(20000):
    state = STATES_JOB[j % 4]
    g, n = rng.choice([1, 2, 4, 8]), rng.choice([1, 1, 2, 4])
    # typed GPUs, as the capture shows them: gres/gpu=N and gres/gpu:h100=N (tres-alloc), per node (tres-per-node)
    lines.append('%d|%s|%s|team%02d|user%04d|%s|%d|%d|%d|cpu=%d,mem=64G,node=%d,billing=%d,gres/gpu=%d,gres/gpu:h100=%d'
                 '|N/A|gres/gpu:h100:%d|N/A|'
                 % (100000 + j, state, rng.choice(['gpu', 'long']), j % 50, j % 1000,
                    rng.choice(REASONS) if state == 'PENDING' else 'None', 8 * g * n, n, n, 8 * g * n, n, 8 * g * n,
                    g * n, g * n, g))
squeue = '\n'.join(lines)
outputs = dict(sinfo=sinfo, squeue=squeue, sdiag=real['sdiag']['stdout'], sshare=real['sshare']['stdout'],
               config=real['config']['stdout'])

times = []
for run in range(5):
    t0 = time.process_time()
    results = dict((name, exporter.PARSERS[name](out)) for name, out in outputs.items())
    registry = CollectorRegistry()
    registry.register(Fixed(results))
    text = generate_latest(registry).decode()
    times.append(time.process_time() - t0)
series = text.count('\n') - 2 * text.count('# HELP')
print('slurm exporter, 1000 nodes / 20000 jobs: parse and render %.2f s CPU (median of 5), %d series, '
      '%d Slurm commands per scrape' % (statistics.median(times), series, len(exporter.COMMANDS)))
