# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm metrics for Prometheus, GPU-aware (gpuhpc.slurm's own Slurm exporter).

Each scrape runs a fixed set of Slurm commands, never one per node or job,
each with a timeout. A command that fails is reported by
slurm_exporter_command_up{command}=0 and an error counter, and its metrics are
left out of that scrape: no stale numbers presented as fresh.
"""

import argparse
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict

# The commands of one scrape: name -> argv.
COMMANDS = {
    'sinfo': ['sinfo', '-h', '-N', '-O',
              'NodeHost:|,StateLong:|,Partition:|,CPUsState:|,Gres:|,GresUsed:|,AllocMem:|,Memory:|'],
    'squeue': ['squeue', '-h', '-a', '-r', '-O',
               'JobID:|,State:|,Partition:|,Account:|,UserName:|,Reason:|,NumCPUs:|,tres-alloc:|,tres-per-node:|,'
               'tres-per-job:|'],
    'sdiag': ['sdiag'],
    'sshare': ['sshare', '-h', '-a', '-P', '-o', 'Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare'],
}

NODE_STATES = ('alloc', 'comp', 'down', 'drain', 'err', 'fail', 'idle', 'maint', 'mix', 'resv')
JOB_STATES = ('pending', 'running', 'suspended', 'cancelled', 'completing', 'completed', 'configuring', 'failed',
              'timeout', 'preempted', 'node_fail')


# --- parsing -----------------------------------------------------------------

def gpu_count(gres):
    """GPUs in a sinfo Gres/GresUsed string: 'gpu:2', 'gpu:h100:8(S:0-1)', 'gpu:1(IDX:0),shard:0' -> count."""
    total = 0
    for part in re.split(r',(?![^(]*\))', gres or ''):
        m = re.match(r'^gpu(?::[^:(]+)?:(\d+)', part.strip())
        if m:
            total += int(m.group(1))
    return total


def tres_gpus(tres):
    """GPUs in a TRES string: 'cpu=1,gres/gpu=2' or 'gres/gpu:h100=2' or 'gres:gpu:2' (per node / per job)."""
    total = 0
    for part in (tres or '').split(','):
        part = part.strip()
        m = re.match(r'^gres[/:]gpu(?::[^=:]+)?[=:](\d+)$', part)
        if m:
            total += int(m.group(1))
    return total


def node_state(text):
    """'mixed', 'idle+drain', 'allocated*', 'down~' -> one of NODE_STATES or 'other'."""
    text = text.lower().rstrip('*~#!%$@^-')
    if 'drain' in text:
        return 'drain'
    for state, words in (('alloc', ('allocated',)), ('comp', ('completing',)), ('down', ('down',)),
                         ('err', ('error',)), ('fail', ('fail',)), ('idle', ('idle',)),
                         ('maint', ('maint',)), ('mix', ('mixed',)), ('resv', ('reserved',))):
        if any(text.startswith(w) for w in words):
            return state
    return 'other'


def parse_sinfo(out):
    """Nodes (each once) and partitions from `sinfo -N -O ...|` lines."""
    nodes, partitions = {}, defaultdict(Counter)
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 8 or not cells[0]:
            continue
        name, state, partition, cpus, gres, gres_used, alloc_mem, memory = cells[:8]
        alloc, idle, other, total = (int(x) for x in cpus.split('/'))
        gpus_total, gpus_alloc = gpu_count(gres), gpu_count(gres_used)
        node = dict(state=node_state(state), cpus_alloc=alloc, cpus_idle=idle, cpus_other=other, cpus_total=total,
                    gpus_total=gpus_total, gpus_alloc=gpus_alloc,
                    mem_alloc=int(alloc_mem or 0), mem_total=int(memory or 0))
        nodes[name] = node
        p = partitions[partition.rstrip('*')]
        for key in ('cpus_alloc', 'cpus_idle', 'cpus_other', 'cpus_total', 'gpus_total', 'gpus_alloc'):
            p[key] += node[key]
        p['nodes'] += 1
    return nodes, dict(partitions)


def parse_squeue(out):
    """Jobs from `squeue -O ...|` lines: state, partition, account, user, reason, cpus, gpus."""
    jobs = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 10 or not cells[0]:
            continue
        jobid, state, partition, account, user, reason, cpus, tres_alloc, per_node, per_job = cells[:10]
        state = state.lower()
        gpus = tres_gpus(tres_alloc) if state == 'running' else (tres_gpus(per_job) or tres_gpus(per_node))
        jobs.append(dict(id=jobid, state=state, partition=partition, account=account, user=user,
                         reason=reason, cpus=int(cpus or 0), gpus=gpus))
    return jobs


SDIAG = (
    ('Server thread count', 'threads'),
    ('Agent queue size', 'agent_queue_size'),
    ('DBD Agent queue size', 'dbd_queue_size'),
    ('Last cycle', 'last_cycle'),
    ('Mean cycle', 'mean_cycle'),
    ('Cycles per minute', 'cycle_per_minute'),
    ('Total backfilled jobs (since last slurm start)', 'total_backfilled_jobs_since_start'),
    ('Total backfilled jobs (since last stats cycle start)', 'total_backfilled_jobs_since_cycle'),
    ('Total backfilled heterogeneous job components', 'total_backfilled_heterogeneous'),
)


def parse_sdiag(out):
    """Scheduler figures from sdiag's text; the backfill section's cycles get a backfill_ prefix."""
    found, section = {}, 'main'
    for line in out.splitlines():
        if line.startswith('Backfilling stats'):
            section = 'backfill'
        elif line.startswith('Main schedule statistics'):
            section = 'main'
        m = re.match(r'^\s*([^:]+?):\s+(\d+)', line)
        if not m:
            continue
        label, value = m.group(1).strip(), int(m.group(2))
        for text, name in SDIAG:
            if label == text:
                if section == 'backfill' and name in ('last_cycle', 'mean_cycle'):
                    name = 'backfill_' + name
                elif section == 'backfill' and label == 'Depth Mean':
                    name = 'backfill_depth_mean'
                found.setdefault(name, value)
        if section == 'backfill' and label == 'Depth Mean':
            found.setdefault('backfill_depth_mean', value)
    if 'Backfilling stats' in out:
        # sdiag prints the cycle figures only once a backfill cycle has run: none yet reads as 0
        for name in ('backfill_last_cycle', 'backfill_mean_cycle', 'backfill_depth_mean'):
            found.setdefault(name, 0)
    return found


def parse_sshare(out):
    """Per account (the account rows, not the user rows, nor the tree's root): its fair-share
    factor, normalised shares and raw usage.

    Slurm's Fair Tree (the default since 19.05) gives a FairShare only to
    users; an account's factor is then the classic one, 2^(-EffectvUsage /
    NormShares): 1 unused, 0.5 when its usage equals its share, towards 0 above.
    """
    accounts = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 7 or not cells[0] or cells[1] or cells[0] == 'root':
            continue
        try:
            norm, raw, used = float(cells[3]), float(cells[4]), float(cells[5])
        except ValueError:
            continue
        if cells[6]:
            factor = float(cells[6])
        else:
            factor = 2 ** (-used / norm) if norm > 0 else 0.0
        accounts[cells[0]] = dict(fairshare=factor, shares=norm, usage=raw)
    return accounts


# --- metrics -------------------------------------------------------------------

class Sample:
    def __init__(self, name, help_text, labels=None):
        self.name, self.help, self.labels, self.values = name, help_text, labels or (), []

    def add(self, value, *labels):
        self.values.append((labels, value))
        return self


def metrics_from(results):
    """Metric families from the parsed outputs of the commands that answered."""
    out = []

    def gauge(name, help_text, value=None, labels=None):
        s = Sample(name, help_text, labels)
        if value is not None:
            s.add(value)
        out.append(s)
        return s

    if 'sinfo' in results:
        nodes, partitions = results['sinfo']
        states = Counter(n['state'] for n in nodes.values())
        for state in NODE_STATES:
            gauge('slurm_nodes_%s' % state, 'Nodes in state %s' % state, states.get(state, 0))
        gauge('slurm_nodes_other', 'Nodes in another state', sum(v for k, v in states.items() if k == 'other'))
        for key in ('alloc', 'idle', 'other', 'total'):
            gauge('slurm_cpus_%s' % key, 'CPUs %s' % key, sum(n['cpus_' + key] for n in nodes.values()))
        total = sum(n['gpus_total'] for n in nodes.values())
        alloc = sum(n['gpus_alloc'] for n in nodes.values())
        unusable = sum(n['gpus_total'] - n['gpus_alloc'] for n in nodes.values()
                       if n['state'] in ('down', 'drain', 'fail', 'err', 'maint'))
        gauge('slurm_gpus_total', 'GPUs', total)
        gauge('slurm_gpus_alloc', 'GPUs allocated to jobs', alloc)
        gauge('slurm_gpus_other', 'GPUs on nodes that cannot run jobs', unusable)
        gauge('slurm_gpus_idle', 'GPUs free for jobs', total - alloc - unusable)
        gauge('slurm_gpus_utilization', 'Share of GPUs allocated', float(alloc) / total if total else 0.0)
        for key, help_text in (('cpus_allocated', 'CPUs allocated'), ('cpus_idle', 'CPUs idle'),
                               ('cpus_other', 'CPUs in another state'), ('cpus_total', 'CPUs'),
                               ('gpus_allocated', 'GPUs allocated'), ('gpus_total', 'GPUs')):
            s = gauge('slurm_partition_%s' % key, '%s in the partition' % help_text, labels=('partition',))
            src = key.replace('allocated', 'alloc')
            for name, p in sorted(partitions.items()):
                s.add(p[src], name)
        s_state = gauge('slurm_node_state', 'Node state (1 for the current state)', labels=('node', 'state'))
        s_gt = gauge('slurm_node_gpus_total', 'GPUs of the node', labels=('node',))
        s_ga = gauge('slurm_node_gpus_allocated', 'GPUs of the node allocated to jobs', labels=('node',))
        s_ca = gauge('slurm_node_cpus_allocated', 'CPUs of the node allocated to jobs', labels=('node',))
        s_ct = gauge('slurm_node_cpus_total', 'CPUs of the node', labels=('node',))
        for name, n in sorted(nodes.items()):
            s_state.add(1, name, n['state'])
            s_gt.add(n['gpus_total'], name)
            s_ga.add(n['gpus_alloc'], name)
            s_ca.add(n['cpus_alloc'], name)
            s_ct.add(n['cpus_total'], name)

    if 'squeue' in results:
        jobs = results['squeue']
        states = Counter(j['state'] for j in jobs)
        for state in JOB_STATES:
            gauge('slurm_queue_%s' % state, 'Jobs %s' % state, states.get(state, 0))
        running = [j for j in jobs if j['state'] == 'running']
        pending = [j for j in jobs if j['state'] == 'pending']
        part_pending = gauge('slurm_partition_jobs_pending', 'Pending jobs in the partition', labels=('partition',))
        for name, count in sorted(Counter(j['partition'] for j in pending).items()):
            part_pending.add(count, name)
        by_reason = gauge('slurm_jobs_pending', 'Pending jobs by partition and reason', labels=('partition', 'reason'))
        for (part, reason), count in sorted(Counter((j['partition'], j['reason']) for j in pending).items()):
            by_reason.add(count, part, reason)
        gpus_pending = gauge('slurm_gpus_pending', 'GPUs asked for by pending jobs', labels=('partition',))
        for part in sorted(set(j['partition'] for j in pending)):
            gpus_pending.add(sum(j['gpus'] for j in pending if j['partition'] == part), part)
        for scope, key in (('account', lambda j: (j['account'],)), ('user', lambda j: (j['user'], j['account']))):
            labels = ('account',) if scope == 'account' else ('user', 'account')
            jp = gauge('slurm_%s_jobs_pending' % scope, 'Pending jobs per %s' % scope, labels=labels)
            jr = gauge('slurm_%s_jobs_running' % scope, 'Running jobs per %s' % scope, labels=labels)
            cr = gauge('slurm_%s_cpus_running' % scope, 'CPUs of running jobs per %s' % scope, labels=labels)
            gr = gauge('slurm_%s_gpus_running' % scope, 'GPUs allocated to running jobs per %s' % scope, labels=labels)
            for k, count in sorted(Counter(key(j) for j in pending).items()):
                jp.add(count, *k)
            groups = defaultdict(list)
            for j in running:
                groups[key(j)].append(j)
            for k, js in sorted(groups.items()):
                jr.add(len(js), *k)
                cr.add(sum(j['cpus'] for j in js), *k)
                gr.add(sum(j['gpus'] for j in js), *k)
        pgr = gauge('slurm_partition_gpus_running', 'GPUs allocated to running jobs per partition',
                    labels=('partition',))
        for part in sorted(set(j['partition'] for j in running)):
            pgr.add(sum(j['gpus'] for j in running if j['partition'] == part), part)

    if 'sdiag' in results:
        for name, value in sorted(results['sdiag'].items()):
            gauge('slurm_scheduler_%s' % name, 'sdiag: %s' % name, value)

    if 'sshare' in results:
        for key, name, help_text in (
                ('fairshare', 'slurm_account_fairshare', 'Fair-share factor of the account (1 unused, 0.5 at its share)'),
                ('shares', 'slurm_account_shares_normalized', 'Share of the cluster the account is entitled to'),
                ('usage', 'slurm_account_usage_raw', 'Decayed usage of the account (sshare RawUsage)')):
            series = gauge(name, help_text, labels=('account',))
            for account, values in sorted(results['sshare'].items()):
                series.add(values[key], account)
    return out


PARSERS = dict(sinfo=parse_sinfo, squeue=parse_squeue, sdiag=parse_sdiag, sshare=parse_sshare)


def scrape(timeout, run=subprocess.run, errors=None):
    """Run the commands, parse what answered; return (results, per-command status and seconds)."""
    results, status = {}, {}
    for name, argv in COMMANDS.items():
        t0 = time.time()
        ok = False
        try:
            proc = run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False)
            if proc.returncode == 0:
                results[name] = PARSERS[name](proc.stdout)
                ok = True
        except (OSError, subprocess.SubprocessError, ValueError):
            ok = False
        status[name] = (ok, time.time() - t0)
        if not ok and errors is not None:
            errors[name] += 1
    return results, status


def collector(timeout, run=subprocess.run):
    """A prometheus_client collector that scrapes Slurm on every collect()."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    errors = Counter()

    def family(sample):
        cls = CounterMetricFamily if sample.name.endswith('_errors_total') else GaugeMetricFamily
        name = sample.name[:-len('_total')] if cls is CounterMetricFamily else sample.name
        fam = cls(name, sample.help, labels=list(sample.labels))
        for labels, value in sample.values:
            fam.add_metric(list(labels), value)
        return fam

    class SlurmCollector(object):
        def collect(self):
            t0 = time.time()
            results, status = scrape(timeout, run=run, errors=errors)
            samples = metrics_from(results)
            up = Sample('slurm_exporter_command_up', 'Whether the Slurm command answered', ('command',))
            took = Sample('slurm_exporter_command_duration_seconds', 'Seconds the Slurm command took', ('command',))
            err = Sample('slurm_exporter_command_errors_total', 'Failed runs of the Slurm command', ('command',))
            for name in COMMANDS:
                up.add(1 if status[name][0] else 0, name)
                took.add(round(status[name][1], 4), name)
                err.add(errors[name], name)
            samples += [up, took, err,
                        Sample('slurm_exporter_scrape_duration_seconds', 'Seconds of the scrape').add(time.time() - t0)]
            for sample in samples:
                yield family(sample)

    return SlurmCollector()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--listen', default='0.0.0.0:9341', help='address:port to serve /metrics on')
    parser.add_argument('--timeout', type=float, default=10, help='seconds one Slurm command may take')
    args = parser.parse_args(argv)
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry()
    registry.register(collector(args.timeout))
    host, port = args.listen.rsplit(':', 1)
    start_http_server(int(port), addr=host.strip('[]'), registry=registry)
    while True:
        time.sleep(3600)


if __name__ == '__main__':
    sys.exit(main())
