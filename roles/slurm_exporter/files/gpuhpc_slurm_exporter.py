# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm metrics for Prometheus, GPU-aware (gpuhpc.slurm's own Slurm exporter).

Each scrape runs a fixed set of Slurm commands, never one per node or job,
all at once, each within the scrape's time budget, so that a scrape ends in
time even when slurmctld does not answer. A command that fails is reported by
slurm_exporter_command_up{command}=0 and an error counter; its figures are
served from its last good result for a while (--keep-last-good), with
slurm_exporter_command_age_seconds{command} saying how old, and then left out:
one slow command does not make every series go stale. Scrapes that
arrive while one runs share its result (single flight): a struggling
slurmctld never gets more than one set of commands at a time.
"""

import argparse
import base64
import hashlib
import json
import os
import pwd
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict

# The commands of one scrape: name -> argv. sinfo -a and squeue -a: hidden
# partitions too. squeue -t all: jobs that ended and slurmctld still holds
# (for MinJobAge, 300 s by default) count in their end state.
COMMANDS = {
    'sinfo': ['sinfo', '-h', '-a', '-N', '-O',
              'NodeHost:|,StateLong:|,Partition:|,CPUsState:|,Gres:|,GresUsed:|,AllocMem:|,Memory:|,Available:|'],
    'squeue': ['squeue', '-h', '-a', '-r', '-t', 'all', '-O',
               'JobID:|,State:|,Partition:|,Account:|,UserName:|,Reason:|,NumCPUs:|,NumNodes:|,NumTasks:|,'
               'tres-alloc:|,tres-per-job:|,tres-per-node:|,tres-per-task:|'],
    'sdiag': ['sdiag'],
    'sshare': ['sshare', '-h', '-a', '-P', '-o', 'Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare,LevelFS'],
    'config': ['scontrol', 'show', 'config'],
}

# A node's state as sinfo writes it (StateLong: Slurm's node_state_string,
# lowercased, 22.05 to 24.11): a name, then at most one flag character.
# INVAL (a registration short of the node's line: fewer GPUs, less memory or
# fewer cores) is written alone, whatever the base state. Slurm >= 22.05
# never sets ERROR: there is no "err".
NODE_STATE_NAMES = (
    ('allocated', 'alloc'), ('completing', 'comp'), ('down', 'down'), ('drained', 'drain'), ('draining', 'drain'),
    ('failing', 'fail'), ('fail', 'fail'), ('idle', 'idle'), ('maint', 'maint'), ('mixed', 'mix'),
    ('reserved', 'resv'), ('inval', 'inval'), ('planned', 'planned'), ('blocked', 'blocked'),
    ('reboot_issued', 'reboot'), ('reboot', 'reboot'), ('future', 'future'), ('unknown', 'unknown'),
)
NODE_STATES = ('alloc', 'comp', 'down', 'drain', 'fail', 'idle', 'maint', 'mix', 'resv', 'inval', 'planned',
               'blocked', 'reboot', 'future', 'unknown')
# The flag character after the name: the first that applies of $ ^ @ # % ~ ! *
# (Slurm shows one), or - (planned, after mixed), + (completing, after allocated).
NODE_FLAGS = (('*', 'not_responding'), ('~', 'powered_down'), ('#', 'powering_up'), ('%', 'powering_down'),
              ('!', 'power_down_pending'), ('$', 'maint_reservation'), ('@', 'reboot_pending'),
              ('^', 'reboot_issued'), ('-', 'planned'), ('+', 'completing'))
# Node states whose free GPUs a job can be given now, on a node that answers and is powered up.
IN_SERVICE = ('alloc', 'comp', 'idle', 'mix')
OUT_OF_REACH = ('not_responding', 'powered_down', 'powering_up', 'powering_down', 'power_down_pending')
# A partition's state as sinfo writes it (Available): those whose nodes slurmctld gives to jobs. A drained
# partition takes no new jobs but starts those queued; a down one queues but starts none; inactive neither.
PARTITION_STATES = ('up', 'drain', 'down', 'inactive')
PARTITION_SCHEDULES = ('up', 'drain')
# Job states of jobs not ended yet; the others count while slurmctld holds the job.
LIVE_STATES = ('pending', 'running', 'suspended', 'completing', 'configuring')
JOB_STATES = ('pending', 'running', 'suspended', 'cancelled', 'completing', 'completed', 'configuring', 'failed',
              'timeout', 'preempted', 'node_fail', 'boot_fail', 'deadline', 'out_of_memory', 'requeued')


# --- parsing -----------------------------------------------------------------

def _gpu_entries(parts, pattern):
    """Sum GPU counts of entries, counting a typed entry only where no untyped one says the total.

    Slurm lists a typed GPU twice where the type is tracked too
    (AccountingStorageTRES=gres/gpu,gres/gpu:a100): `gres/gpu=3,gres/gpu:a100=3`
    is three GPUs, not six. Without the untyped total, the typed entries add up.
    """
    untyped, typed = None, 0
    for part in parts:
        m = re.match(pattern, part.strip())
        if not m:
            continue
        if m.group('type') is None:
            untyped = (untyped or 0) + int(m.group('count'))
        else:
            typed += int(m.group('count'))
    return typed if untyped is None else untyped


def gpu_count(gres):
    """GPUs in a sinfo Gres/GresUsed string: 'gpu:2', 'gpu:h100:8(S:0-1)', 'gpu:1(IDX:0),shard:0' -> count."""
    return _gpu_entries(re.split(r',(?![^(]*\))', gres or ''), r'^gpu(?::(?P<type>[^:(]+))?:(?P<count>\d+)')


def tres_gpus(tres):
    """GPUs in a TRES string: 'cpu=1,gres/gpu=2', 'gres/gpu=3,gres/gpu:a100=3' (3), 'gres/gpu:h100=2',
    or a request such as 'gres/gpu:2', 'gres:gpu:a100:2'."""
    return _gpu_entries((tres or '').split(','), r'^gres[/:]gpu(?::(?P<type>[^=:]+))?[=:](?P<count>\d+)$')


def node_state(text):
    """sinfo's StateLong -> (one of NODE_STATES or 'other', [flags of NODE_FLAGS]):
    'mixed' -> ('mix', []), 'idle*' -> ('idle', ['not_responding']), 'down~' -> ('down', ['powered_down']),
    'inval' -> ('inval', []), 'mixed-' -> ('mix', ['planned'])."""
    text = (text or '').strip().lower()
    flags = [name for char, name in NODE_FLAGS if text.endswith(char)]
    base = text.rstrip(''.join(char for char, dummy in NODE_FLAGS))
    for word, state in NODE_STATE_NAMES:
        if base == word:
            return state, flags
    return 'other', flags


def parse_sinfo(out):
    """Nodes (each once) and partitions from `sinfo -N -O ...|` lines (a node in two partitions has two).

    A node's free GPUs are free for jobs (gpus_idle) where the node takes jobs, answers and is powered up,
    and in the partitions whose state lets slurmctld start jobs (up, drain); in the cluster's figure, where
    at least one of its partitions does.
    """
    nodes, partitions, part_states = {}, defaultdict(Counter), {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 9 or not cells[0]:
            continue
        name, state, partition, cpus, gres, gres_used, alloc_mem, memory, available = cells[:9]
        alloc, idle, other, total = (int(x) for x in cpus.split('/'))
        gpus_total, gpus_alloc = gpu_count(gres), gpu_count(gres_used)
        base, flags = node_state(state)
        node = nodes.get(name) or dict(
            state=base, flags=flags, cpus_alloc=alloc, cpus_idle=idle, cpus_other=other, cpus_total=total,
            gpus_total=gpus_total, gpus_alloc=gpus_alloc, gpus_idle=0,
            mem_alloc=int(alloc_mem or 0), mem_total=int(memory or 0))
        nodes[name] = node
        # GPUs a job could be given now: not allocated, on a node that takes jobs, answers and is powered up
        usable = base in IN_SERVICE and not set(flags) & set(OUT_OF_REACH)
        free = gpus_total - gpus_alloc if usable and available in PARTITION_SCHEDULES else 0
        node['gpus_idle'] = max(node['gpus_idle'], free)
        partition = partition.rstrip('*')
        part_states[partition] = available if available in PARTITION_STATES else 'other'
        p = partitions[partition]
        for key in ('cpus_alloc', 'cpus_idle', 'cpus_other', 'cpus_total', 'gpus_total', 'gpus_alloc'):
            p[key] += node[key]
        p['gpus_idle'] += free
        p['nodes'] += 1
    return nodes, dict(partitions), part_states


def _count(text):
    try:
        return int(text)
    except ValueError:
        return 0


def requested_gpus(tres_req, per_job, per_node, per_task, nodes, tasks):
    """GPUs a pending job asks for in all.

    squeue's tres-alloc of a pending job is Slurm's own total of the request
    (its tres_req_str: per-node counts times the nodes, per-task counts times
    the tasks). Where that lists no GPU (gres/gpu is not in
    AccountingStorageTRES), the request itself is multiplied out.
    """
    total = tres_gpus(tres_req)
    if total:
        return total
    return tres_gpus(per_job) or tres_gpus(per_node) * max(nodes, 1) or tres_gpus(per_task) * max(tasks, 1)


# squeue's Reason is the job's state description where slurmctld wrote one
# (free text with names and numbers), else its reason code. The descriptions
# whose code is known: (prefix, code), from slurmctld's source (22.05, 24.11).
REASON_TEXTS = (
    # job_scheduler.c: state_reason = WAIT_RESOURCES
    ('Nodes required for job are DOWN, DRAINED', 'Resources'),
)
_REASON_CODE = re.compile(r'^([A-Za-z][A-Za-z0-9_]*)\s*(?:$|[,:(])')


def reason_code(text):
    """Slurm's reason code, a label value from a bounded set: 'ReqNodeNotAvail, UnavailableNodes:gpu-[01-03]'
    -> 'ReqNodeNotAvail'; a known state description -> its code; any other free text -> 'Other'."""
    text = (text or '').strip()
    m = _REASON_CODE.match(text)
    if m:
        return m.group(1)
    for prefix, code in REASON_TEXTS:
        if text.startswith(prefix):
            return code
    return 'Other' if text else 'None'


def parse_squeue(out):
    """Jobs from `squeue -O ...|` lines: state, partitions (a pending job may name several: each it can run in),
    account, user, reason (its code), cpus, gpus."""
    jobs = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 13 or not cells[0]:
            continue
        state, partition, account, user, reason, cpus, nodes, tasks, tres, per_job, per_node, per_task = cells[1:13]
        state = state.lower()
        if state == 'pending':
            gpus = requested_gpus(tres, per_job, per_node, per_task, _count(nodes), _count(tasks))
        else:
            gpus = tres_gpus(tres)
        jobs.append(dict(state=state, partitions=[p for p in partition.split(',') if p] or [partition],
                         account=account, user=user, reason=reason_code(reason), cpus=_count(cpus), gpus=gpus))
    return jobs


# sdiag's lines: (section or None for any, label, metric name). COUNTERS says
# which are counters (they only grow, until slurmctld restarts); the rest,
# whatever their name, are gauges (the jobs backfilled since the stats cycle
# began fall back to 0 at each cycle).
SDIAG = (
    (None, 'Server thread count', 'threads'),
    (None, 'Agent queue size', 'queue_size'),
    (None, 'DBD Agent queue size', 'dbd_queue_size'),
    ('main', 'Last cycle', 'last_cycle'),
    ('main', 'Mean cycle', 'mean_cycle'),
    ('main', 'Cycles per minute', 'cycle_per_minute'),
    ('backfill', 'Last cycle', 'backfill_last_cycle'),
    ('backfill', 'Mean cycle', 'backfill_mean_cycle'),
    ('backfill', 'Depth Mean', 'backfill_depth_mean'),
    ('backfill', 'Total backfilled jobs (since last slurm start)', 'backfilled_jobs_since_start_total'),
    ('backfill', 'Total backfilled jobs (since last stats cycle start)', 'backfilled_jobs_since_cycle_total'),
    ('backfill', 'Total backfilled heterogeneous job components', 'backfilled_heterogeneous_total'),
)
COUNTERS = ('slurm_scheduler_backfilled_jobs_since_start_total', 'slurm_scheduler_backfilled_heterogeneous_total',
            'slurm_exporter_command_errors_total', 'slurm_exporter_scrapes_shared_total')


def parse_sdiag(out):
    """Scheduler figures from sdiag's text, by section (main scheduler, backfill)."""
    found, section = {}, 'other'
    for line in out.splitlines():
        if line and not line[0].isspace():  # a line at the margin starts a section
            section = ('main' if line.startswith('Main schedule statistics') else
                       'backfill' if line.startswith('Backfilling stats') else 'other')
        m = re.match(r'^\s*([^:]+?):\s+(\d+)', line)
        if not m:
            continue
        label, value = m.group(1).strip(), int(m.group(2))
        for where, text, name in SDIAG:
            if label == text and where in (None, section):
                found.setdefault(name, value)
    if 'Backfilling stats' in out:
        # sdiag prints the cycle figures only once a backfill cycle has run: none yet reads as 0
        for name in ('backfill_last_cycle', 'backfill_mean_cycle', 'backfill_depth_mean'):
            found.setdefault(name, 0)
    return found


def _number(text):
    """sshare's figure, or None where it prints none; 'inf' is infinity (LevelFS of an account with no usage)."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_sshare(out):
    """Slurm's own fair-share figures, as sshare gives them: per account (its rows with no user, not the
    tree's root) its normalised shares, raw usage and LevelFS; per user association (account, user) its
    FairShare factor, the one the priority plugin uses.

    Under Fair Tree (Slurm's default) sshare gives a FairShare factor to users only; an account's standing
    among its siblings is its LevelFS (its shares over its usage: above 1 below its share, infinite unused).
    """
    accounts, users = {}, {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if len(cells) < 8 or not cells[0] or cells[0] == 'root':
            continue
        account, user = cells[0], cells[1]
        norm, raw, factor, level = (_number(cells[i]) for i in (3, 4, 6, 7))
        if user:
            if factor is not None:
                users[(account, user)] = factor
        elif norm is not None:
            accounts[account] = dict(shares=norm, usage=raw or 0.0, level=level)
    return dict(accounts=accounts, users=users)


# What PrivateData may hide from a user who is not privileged.
PRIVATE = ('accounts', 'jobs', 'nodes', 'partitions', 'reservations', 'usage', 'users')


_PING = re.compile(r'^Slurmctld\((primary|backup\d*)\) at (\S+) is (UP|DOWN)')


def parse_config(out):
    """PrivateData and SlurmUser from `scontrol show config`, and the controller in control: the first that
    its closing lines ("Slurmctld(primary) at ctl is UP", "Slurmctld(backup) at ctl2 is DOWN") say is UP."""
    found, in_control = {}, None
    for line in out.splitlines():
        ping = _PING.match(line)
        if ping:
            if in_control is None and ping.group(3) == 'UP':
                in_control = ping.group(2)
            continue
        key, sep, value = line.partition('=')
        if sep and key.strip() in ('PrivateData', 'SlurmUser'):
            found[key.strip()] = value.strip()
    private = found.get('PrivateData', 'none').lower()
    return dict(private=sorted(p for p in PRIVATE if p in private),
                slurm_user=found.get('SlurmUser', '').split('(')[0], in_control=in_control)


def whoami():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def view_partial(config, user):
    """What PrivateData hides from `user`: nothing from root and SlurmUser, who see all."""
    if user in ('root', config['slurm_user']):
        return []
    return config['private']


# --- metrics -------------------------------------------------------------------

class Sample:
    """One metric family: a counter where COUNTERS names it, else a gauge (slurm_gpus_total, the GPUs there
    are, is a gauge)."""

    def __init__(self, name, help_text, labels=None):
        self.name, self.help, self.labels, self.values = name, help_text, labels or (), []

    def add(self, value, *labels):
        self.values.append((labels, value))
        return self


def _sum_by(jobs, keys, field=None):
    """{key: count of jobs, or sum of job[field]}, over each key of keys(job) (a job pending in two
    partitions counts in both)."""
    out = Counter()
    for j in jobs:
        for key in keys(j):
            out[key] += 1 if field is None else j[field]
    return sorted(out.items())


def metrics_from(results, user=None):
    """Metric families from the parsed outputs of the commands that answered."""
    out = []

    def gauge(name, help_text, value=None, labels=None):
        s = Sample(name, help_text, labels)
        if value is not None:
            s.add(value)
        out.append(s)
        return s

    if 'sinfo' in results:
        nodes, partitions, part_states = results['sinfo']
        states = Counter(n['state'] for n in nodes.values())
        for state in NODE_STATES:
            gauge('slurm_nodes_%s' % state, 'Nodes in state %s' % state, states.get(state, 0))
        gauge('slurm_nodes_other', 'Nodes in another state', states.get('other', 0))
        flagged = Counter(flag for n in nodes.values() for flag in n['flags'])
        gauge('slurm_nodes_not_responding', 'Nodes that do not answer slurmctld (state ending in *)',
              flagged.get('not_responding', 0))
        for key in ('alloc', 'idle', 'other', 'total'):
            gauge('slurm_cpus_%s' % key, 'CPUs %s' % key, sum(n['cpus_' + key] for n in nodes.values()))
        total = sum(n['gpus_total'] for n in nodes.values())
        alloc = sum(n['gpus_alloc'] for n in nodes.values())
        idle = sum(n['gpus_idle'] for n in nodes.values())
        gauge('slurm_gpus_total', 'GPUs', total)
        gauge('slurm_gpus_alloc', 'GPUs allocated to jobs', alloc)
        gauge('slurm_gpus_other', 'GPUs neither allocated nor free: on nodes that take no jobs (down, drained, '
              'failed, invalid, in maintenance, reserved), do not answer or are powered down', total - alloc - idle)
        gauge('slurm_gpus_idle', 'GPUs free for jobs: not allocated, on nodes that take jobs, answer and are '
              'powered up', idle)
        gauge('slurm_gpus_utilization', 'Share of GPUs allocated', float(alloc) / total if total else 0.0)
        gauge('slurm_memory_allocated_bytes', 'Memory allocated to jobs',
              sum(n['mem_alloc'] for n in nodes.values()) * MIB)
        gauge('slurm_memory_total_bytes', 'Memory of the nodes (RealMemory)',
              sum(n['mem_total'] for n in nodes.values()) * MIB)
        for key, help_text in (('cpus_allocated', 'CPUs allocated'), ('cpus_idle', 'CPUs idle'),
                               ('cpus_other', 'CPUs in another state'), ('cpus_total', 'CPUs'),
                               ('gpus_allocated', 'GPUs allocated'), ('gpus_total', 'GPUs'),
                               ('gpus_idle', 'GPUs free for jobs (not allocated, on nodes that take jobs)')):
            s = gauge('slurm_partition_%s' % key, '%s in the partition' % help_text, labels=('partition',))
            src = key.replace('allocated', 'alloc')
            for name, p in sorted(partitions.items()):
                s.add(p[src], name)
        s = gauge('slurm_partition_state', 'Partition state (1 for the current one: up, drain, down, inactive; '
                  'slurmctld starts jobs in up and drained ones)', labels=('partition', 'state'))
        for name, state in sorted(part_states.items()):
            s.add(1, name, state)
        per_node = (('slurm_node_gpus_total', 'GPUs of the node', 'gpus_total', 1),
                    ('slurm_node_gpus_allocated', 'GPUs of the node allocated to jobs', 'gpus_alloc', 1),
                    ('slurm_node_cpus_allocated', 'CPUs of the node allocated to jobs', 'cpus_alloc', 1),
                    ('slurm_node_cpus_total', 'CPUs of the node', 'cpus_total', 1),
                    ('slurm_node_memory_allocated_bytes', 'Memory of the node allocated to jobs', 'mem_alloc', MIB),
                    ('slurm_node_memory_total_bytes', 'Memory of the node (RealMemory)', 'mem_total', MIB))
        s_state = gauge('slurm_node_state', 'Node state (1 for the current state)', labels=('node', 'state'))
        s_flag = gauge('slurm_node_flag', 'The flag sinfo shows after the node\'s state (1 for the current one: '
                       'not_responding, powered_down, reboot_pending, planned, ..., or none)', labels=('node', 'flag'))
        series = [(gauge(name, help_text, labels=('node',)), key, scale) for name, help_text, key, scale in per_node]
        for name, n in sorted(nodes.items()):
            s_state.add(1, name, n['state'])
            for flag in n['flags'] or ['none']:  # sinfo shows one at the most
                s_flag.add(1, name, flag)
            for s, key, scale in series:
                s.add(n[key] * scale, name)

    if 'squeue' in results:
        jobs = results['squeue']
        states = Counter(j['state'] for j in jobs)
        for state in JOB_STATES:
            held = '' if state in LIVE_STATES else ' (ended, while slurmctld holds them: MinJobAge)'
            gauge('slurm_queue_%s' % state, 'Jobs %s%s' % (state, held), states.get(state, 0))
        running = [j for j in jobs if j['state'] == 'running']
        pending = [j for j in jobs if j['state'] == 'pending']
        for name, help_text, jobs_of, key, field, labels in (
                ('slurm_partition_jobs_pending', 'Pending jobs in the partition (a job in each it may run in)', pending,
                 lambda j: [(p,) for p in j['partitions']], None, ('partition',)),
                ('slurm_jobs_pending', 'Pending jobs by partition (each it may run in) and reason code', pending,
                 lambda j: [(p, j['reason']) for p in j['partitions']], None, ('partition', 'reason')),
                ('slurm_gpus_pending', 'GPUs asked for by pending jobs (each job\'s total), by partition (each it '
                 'may run in) and reason code',
                 pending, lambda j: [(p, j['reason']) for p in j['partitions']], 'gpus', ('partition', 'reason')),
                ('slurm_partition_gpus_running', 'GPUs allocated to running jobs per partition', running,
                 lambda j: [(p,) for p in j['partitions']], 'gpus', ('partition',))):
            s = gauge(name, help_text, labels=labels)
            for k, value in _sum_by(jobs_of, key, field):
                s.add(value, *k)
        for scope, key, labels in (('account', lambda j: [(j['account'],)], ('account',)),
                                   ('user', lambda j: [(j['user'], j['account'])], ('user', 'account'))):
            for what, jobs_of, field, help_text in (
                    ('jobs_pending', pending, None, 'Pending jobs'), ('jobs_running', running, None, 'Running jobs'),
                    ('cpus_running', running, 'cpus', 'CPUs of running jobs'),
                    ('gpus_running', running, 'gpus', 'GPUs allocated to running jobs')):
                s = gauge('slurm_%s_%s' % (scope, what), '%s per %s' % (help_text, scope), labels=labels)
                for k, value in _sum_by(jobs_of, key, field):
                    s.add(value, *k)

    if 'sdiag' in results:
        for name, value in sorted(results['sdiag'].items()):
            gauge('slurm_scheduler_%s' % name, 'sdiag: %s' % name.replace('_', ' '), value)

    if 'config' in results:
        hidden = view_partial(results['config'], user or whoami())
        s = gauge('slurm_exporter_view_partial', 'What PrivateData hides from the exporter\'s user, by kind (1 hidden): '
                  'run it as SlurmUser or a Slurm operator', labels=('kind',))
        for kind in PRIVATE:
            s.add(1 if kind in hidden else 0, kind)

    if 'sshare' in results:
        accounts = results['sshare']['accounts']
        for key, name, help_text in (
                ('level', 'slurm_account_level_fairshare', 'sshare LevelFS of the account: its shares over its '
                 'usage among its siblings (above 1 below its share, +Inf unused)'),
                ('shares', 'slurm_account_shares_normalized', 'Share of the cluster the account is entitled to'),
                ('usage', 'slurm_account_usage_raw', 'Decayed usage of the account (sshare RawUsage)')):
            series = gauge(name, help_text, labels=('account',))
            for account, values in sorted(accounts.items()):
                if values[key] is not None:
                    series.add(values[key], account)
        series = gauge('slurm_user_fairshare', 'sshare FairShare of the user in the account: the fair-share factor '
                       'of the user\'s job priority (1 best, 0 worst)', labels=('user', 'account'))
        for (account, user), factor in sorted(results['sshare']['users'].items()):
            series.add(factor, user, account)
    return out


MIB = 1024 * 1024
PARSERS = dict(sinfo=parse_sinfo, squeue=parse_squeue, sdiag=parse_sdiag, sshare=parse_sshare, config=parse_config)


def _run_one(name, argv, budget, run, into):
    t0 = time.time()
    ok = False
    try:
        proc = run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=budget, check=False)
        if proc.returncode == 0:
            into[name] = PARSERS[name](proc.stdout)
            ok = True
    except (OSError, subprocess.SubprocessError, ValueError):
        ok = False
    return ok, time.time() - t0


def scrape(budget, run=subprocess.run, errors=None, only=None):
    """Run the commands (or those named in ``only``) at once, each within budget seconds, and parse what
    answered; return (results, {command: (ok, seconds)})."""
    results, status, threads = {}, {}, []

    def work(name, argv):
        status[name] = _run_one(name, argv, budget, run, results)

    for name, argv in COMMANDS.items():
        if only is not None and name not in only:
            continue
        t = threading.Thread(target=work, args=(name, argv), name='slurm-' + name, daemon=True)
        t.start()
        threads.append((name, t))
    deadline = time.time() + budget + 1  # subprocess.run kills a command at its timeout
    for name, t in threads:
        t.join(max(0.0, deadline - time.time()))
    for name, dummy in threads:
        if name not in status:  # still running past the budget: counted as failed
            status[name] = (False, budget)
            results.pop(name, None)
        if not status[name][0] and errors is not None:
            errors[name] += 1
    return results, status


class SingleFlight(object):
    """One scrape at a time: a scrape that arrives while one runs waits for it and takes its result."""

    def __init__(self, fn):
        self.fn, self.cond, self.running, self.generation, self.result = fn, threading.Condition(), False, 0, None
        self.shared = 0

    def __call__(self):
        with self.cond:
            if self.running:
                generation = self.generation
                while self.running and self.generation == generation:
                    self.cond.wait()
                self.shared += 1
                return self.result
            self.running = True
        result = None
        try:
            result = self.fn()
        finally:
            with self.cond:
                self.result, self.running = result, False
                self.generation += 1
                self.cond.notify_all()
        return result


class LastGood(object):
    """Each command's last parsed result and when it came: a command that fails (one slow sdiag, a
    slurmctld busy for a scrape) is served from its last good result for up to ``keep`` seconds, so that
    its series do not go stale and every alert's for: does not start over; the age says how old it is."""

    def __init__(self, keep, clock=time.time):
        self.keep, self.clock, self.results = keep, clock, {}

    def fill(self, results, status):
        """results with each failed command's last good result where young enough; {command: age in seconds}
        of what is served (0 fresh; commands with nothing served are left out)."""
        now, ages = self.clock(), {}
        for name in COMMANDS:
            if status.get(name, (False, 0))[0] and name in results:
                self.results[name] = (results[name], now)
                ages[name] = 0.0
            elif name in self.results and now - self.results[name][1] <= self.keep:
                results[name] = self.results[name][0]
                ages[name] = now - self.results[name][1]
        return results, ages


class Standby(object):
    """With several controllers, an exporter runs on each and only the one on the controller in control
    serves Slurm's figures (else every sum counts them twice): the others stand by, run `scontrol show
    config` alone, and take over at the scrape after it names their controller. Without ``controller``
    (one controller), never on standby. When config does not answer, the last decision holds."""

    def __init__(self, controller=None):
        self.controller, self.standby = controller or None, False

    def commands(self):
        return ('config',) if self.standby else None

    def update(self, results):
        if self.controller and 'config' in results and results['config'].get('in_control'):
            self.standby = results['config']['in_control'] != self.controller
        return self.standby


def collector(budget, run=subprocess.run, keep=300, clock=time.time, controller=None):
    """A prometheus_client collector: each collect() runs (or joins) one scrape of Slurm."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    errors, user, warned, last_good = Counter(), whoami(), [], LastGood(keep, clock)
    standby = Standby(controller)

    def family(sample):
        if sample.name in COUNTERS:
            fam = CounterMetricFamily(sample.name[:-len('_total')], sample.help, labels=list(sample.labels))
        else:
            fam = GaugeMetricFamily(sample.name, sample.help, labels=list(sample.labels))
        for labels, value in sample.values:
            fam.add_metric(list(labels), value)
        return fam

    def one_scrape():
        t0 = time.time()
        results, status = scrape(budget, run=run, errors=errors, only=standby.commands())
        if standby.update(results):
            # another controller is in control: its exporter serves the figures
            results, status, ages = {}, dict((n, s) for n, s in status.items() if n == 'config'), {}
        else:
            results, ages = last_good.fill(results, status)
        samples = metrics_from(results, user)
        hidden = view_partial(results['config'], user) if 'config' in results else []
        if hidden and hidden != warned:
            sys.stderr.write('PrivateData=%s hides %s from user %s: run the exporter as SlurmUser (%s) or make %s '
                             'a Slurm operator, or its figures leave out what it cannot see\n'
                             % (','.join(results['config']['private']), ', '.join(hidden), user,
                                results['config']['slurm_user'], user))
        warned[:] = hidden
        up = Sample('slurm_exporter_command_up', 'Whether the Slurm command answered', ('command',))
        took = Sample('slurm_exporter_command_duration_seconds', 'Seconds the Slurm command took', ('command',))
        err = Sample('slurm_exporter_command_errors_total', 'Failed runs of the Slurm command', ('command',))
        age = Sample('slurm_exporter_command_age_seconds', 'Age of the result the figures of the Slurm command come '
                     'from: 0 when it answered this scrape; its last good result is served for up to %d s' % keep,
                     ('command',))
        for name in COMMANDS:
            if name in status:  # run this scrape (a standby runs config alone)
                up.add(1 if status[name][0] else 0, name)
                took.add(round(status[name][1], 4), name)
            if name in ages:
                age.add(round(ages[name], 3), name)
            err.add(errors[name], name)
        on_standby = Sample('slurm_exporter_standby', 'Whether this exporter stands by (1): its controller is not '
                            'the one in control, whose exporter serves the Slurm figures').add(1 if standby.standby else 0)
        return samples + [up, took, err, age, on_standby,
                          Sample('slurm_exporter_scrape_duration_seconds', 'Seconds of the scrape').add(time.time() - t0),
                          Sample('slurm_exporter_scrape_budget_seconds',
                                 'Seconds a scrape may take (each command is stopped then)').add(budget)]

    flight = SingleFlight(one_scrape)

    class SlurmCollector(object):
        def collect(self):
            samples = flight() or []
            shared = Sample('slurm_exporter_scrapes_shared_total',
                            'Scrapes that arrived while another ran and took its result').add(flight.shared)
            for sample in samples + [shared]:
                yield family(sample)

    return SlurmCollector()


# --- serving ------------------------------------------------------------------

def load_web_config(path):
    """(cert_file, key_file, {user: bcrypt hash}) from an exporter-toolkit web config (YAML, or JSON)."""
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError:
        import yaml
        doc = yaml.safe_load(text)
    doc = doc or {}
    tls = doc.get('tls_server_config') or {}
    return tls.get('cert_file') or '', tls.get('key_file') or '', dict(doc.get('basic_auth_users') or {})


class BasicAuth(object):
    """WSGI middleware: HTTP basic auth against bcrypt hashes. A header that passed once is remembered (as its
    SHA-256), so that bcrypt's cost is paid once per password, not once per scrape."""

    def __init__(self, app, users, checkpw=None):
        if checkpw is None:
            import bcrypt
            checkpw = bcrypt.checkpw
        self.app, self.users, self.checkpw, self.passed = app, users, checkpw, set()

    def allowed(self, header):
        if not header.startswith('Basic '):
            return False
        seen = hashlib.sha256(header.encode('utf-8', 'replace')).hexdigest()
        if seen in self.passed:
            return True
        try:
            user, colon, password = base64.b64decode(header[6:].strip()).decode('utf-8').partition(':')
        except (ValueError, UnicodeDecodeError):
            return False
        digest = self.users.get(user)
        if not colon or digest is None or not self.checkpw(password.encode('utf-8'), digest.encode('utf-8')):
            return False
        self.passed.add(seen)
        return True

    def __call__(self, environ, start_response):
        if self.allowed(environ.get('HTTP_AUTHORIZATION', '')):
            return self.app(environ, start_response)
        start_response('401 Unauthorized', [('WWW-Authenticate', 'Basic realm="gpuhpc-slurm-exporter"'),
                                            ('Content-Type', 'text/plain; charset=utf-8')])
        return [b'Unauthorized\n']


def serve(listen, registry, web_config=''):
    """Serve /metrics of registry on listen (ADDRESS:PORT or [IPv6]:PORT), with the web config's TLS and basic
    auth when one is given. Returns the server (serve_forever() runs it)."""
    import socket
    import socketserver
    import ssl
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    host, port = listen.rsplit(':', 1)
    host = host.strip('[]')
    app = make_wsgi_app(registry)
    cert, key, users = load_web_config(web_config) if web_config else ('', '', {})
    if users:
        app = BasicAuth(app, users)
    family = socket.getaddrinfo(host or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]

    class Server(socketserver.ThreadingMixIn, WSGIServer):
        daemon_threads = True
        address_family = family

        def finish_request(self, request, client_address):
            if isinstance(request, ssl.SSLSocket):
                request.settimeout(Quiet.timeout)
                request.do_handshake()
            WSGIServer.finish_request(self, request, client_address)

        def handle_error(self, request, client_address):
            # a client that speaks plain HTTP to TLS, or goes away: one line, no traceback
            sys.stderr.write('request from %s failed: %s\n' % (client_address[0], sys.exc_info()[1]))

    class Quiet(WSGIRequestHandler):
        timeout = 30

        def log_message(self, *args):
            pass

    server = make_server(host, int(port), app, server_class=Server, handler_class=Quiet)
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert, key)
        # the handshake happens in the request's thread, not in accept()
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--listen', default='0.0.0.0:9341', help='address:port to serve /metrics on')
    parser.add_argument('--timeout', type=float, default=8,
                        help='seconds a scrape may take: the commands run at once and each is stopped then '
                             '(keep it below the scrape_timeout of Prometheus)')
    parser.add_argument('--keep-last-good', type=float, default=300,
                        help='seconds a command that fails is served from its last good result (its figures keep '
                             'their series; slurm_exporter_command_age_seconds says how old); 0 serves none')
    parser.add_argument('--controller', default='',
                        help='this host\'s name as a SlurmctldHost, where there are several: the exporter serves '
                             'Slurm\'s figures only while its controller is in control, and stands by otherwise')
    parser.add_argument('--web-config-file', default='',
                        help="TLS and basic auth, in exporter-toolkit's web config format (tls_server_config: "
                             'cert_file, key_file; basic_auth_users: bcrypt hashes)')
    args = parser.parse_args(argv)
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(collector(args.timeout, keep=args.keep_last_good, controller=args.controller))
    serve(args.listen, registry, args.web_config_file).serve_forever()


if __name__ == '__main__':
    sys.exit(main())
