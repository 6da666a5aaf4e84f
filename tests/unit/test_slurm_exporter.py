"""The slurm exporter (roles/slurm_exporter/files/gpuhpc_slurm_exporter.py) on
Slurm output captured in the lab, Slurm 22.05 and 24.11, in the capture shape
with a known job mix (tests/unit/fixtures/slurm_exporter/capture.sh): two
nodes of two typed a100 GPUs, a hidden second partition set DOWN, gpu-02
drained with one GPU free; running a typed 1-GPU job (vic), a 2-node 1-GPU-per-node job
(nora) and a CPU job in the hidden partition; pending a 2-node job, a
2-task GPU-per-task job and a job over its account's GPU cap; one job that
completed and one that failed. The figures are checked against what
scontrol says of the same jobs and nodes, captured beside."""
import glob
import importlib.util
import json
import os
import re
import subprocess
import threading
import time
from collections import Counter

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
    assert m[('slurm_gpus_alloc',)] == 3
    # gpu-02's free GPU is on a drained node: not free for jobs
    assert m[('slurm_gpus_idle',)] == 0 and m[('slurm_gpus_other',)] == 1
    assert m[('slurm_nodes_drain',)] == 1
    assert m[('slurm_partition_gpus_total', 'gpu')] == 4 and m[('slurm_partition_gpus_total', 'short')] == 2
    assert m[('slurm_partition_gpus_idle', 'gpu')] == 0 and m[('slurm_partition_gpus_idle', 'short')] == 0
    assert m[('slurm_partition_state', 'gpu', 'up')] == 1 and m[('slurm_partition_state', 'short', 'down')] == 1
    # typed GPUs counted once: Slurm lists gres/gpu=1 and gres/gpu:a100=1 for one GPU
    assert m[('slurm_account_gpus_running', 'vision')] == 1
    assert m[('slurm_account_gpus_running', 'nlp')] == 2
    assert m[('slurm_user_gpus_running', 'vic', 'vision')] == 1
    assert m[('slurm_partition_gpus_running', 'gpu')] == 3
    assert m[('slurm_queue_running',)] == 3 and m[('slurm_queue_pending',)] == 3
    # ended jobs that slurmctld still holds
    assert m[('slurm_queue_completed',)] == 1 and m[('slurm_queue_failed',)] == 1
    assert m[('slurm_jobs_pending', 'gpu', 'AssocGrpGRES')] == 1
    assert m[('slurm_gpus_pending', 'gpu', 'AssocGrpGRES')] == 2
    # each pending job's total: 2 nodes x 1 GPU, 2 tasks x 1 GPU
    assert sum(v for k, v in m.items() if k[:2] == ('slurm_gpus_pending', 'gpu')) == 6
    assert m[('slurm_scheduler_dbd_queue_size',)] == 0
    assert sum(v for k, v in m.items() if k[0] == 'slurm_node_gpus_total') == 4
    assert m[('slurm_memory_total_bytes',)] == sum(v for k, v in m.items() if k[0] == 'slurm_node_memory_total_bytes')
    assert m[('slurm_memory_allocated_bytes',)] > 0


def _scontrol(text):
    """Records of `scontrol show job|node -o`: one dict per line, key=value split at spaces."""
    out = []
    for line in text.splitlines():
        rec = {}
        for word in line.split():
            key, sep, value = word.partition('=')
            if sep:
                rec[key] = value
        if rec:
            out.append(rec)
    return out


def _untyped_gpus(tres):
    """The gres/gpu=N entry of a TRES string, as Slurm itself totals it."""
    for part in (tres or '').split(','):
        if part.startswith('gres/gpu='):
            return int(part.split('=', 1)[1])
    return 0


def test_the_figures_are_what_scontrol_says(capture):
    """Truth from Slurm: the same jobs and nodes as scontrol shows them."""
    m = values(exporter.metrics_from(exporter.scrape(5, run=Replay(capture))[0]))
    jobs = _scontrol(capture['truth']['jobs']['stdout'])
    nodes = _scontrol(capture['truth']['nodes']['stdout'])
    running, pending = Counter(), Counter()
    for j in jobs:
        if j['JobState'] == 'RUNNING':
            running[j['Account']] += _untyped_gpus(j.get('AllocTRES') or j.get('TRES'))
        elif j['JobState'] == 'PENDING':
            pending[j['Partition']] += _untyped_gpus(j.get('ReqTRES') or j.get('TRES'))
    for account, gpus in running.items():
        assert m[('slurm_account_gpus_running', account)] == gpus
    for partition, gpus in pending.items():
        assert sum(v for k, v in m.items() if k[:2] == ('slurm_gpus_pending', partition)) == gpus
    assert m[('slurm_gpus_alloc',)] == sum(_untyped_gpus(n.get('AllocTRES')) for n in nodes)
    assert m[('slurm_cpus_total',)] == sum(int(n['CPUTot']) for n in nodes)
    assert m[('slurm_memory_total_bytes',)] == sum(int(n['RealMemory']) for n in nodes) * 1024 * 1024
    for p in _scontrol(capture['truth']['partitions']['stdout']):
        assert m[('slurm_partition_state', p['PartitionName'], p['State'].lower())] == 1


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
    # typed GPUs tracked as TRES too: the untyped entry is the total, not one more
    ('cpu=3,node=1,billing=3,gres/gpu=3,gres/gpu:a100=3', 3),
    ('gres/gpu=6,gres/gpu:a100=2,gres/gpu:h100=4', 6),
    ('gres/gpu:a100=2,gres/gpu:h100=4', 6),  # only typed entries: they add up
])
def test_tres_gpus(text, count):
    assert exporter.tres_gpus(text) == count


@pytest.mark.parametrize('args, gpus', [
    (('cpu=8,node=4,gres/gpu=32', 'N/A', 'gres/gpu:8', 'N/A', 4, 4), 32),  # Slurm's total
    (('cpu=8,node=4', 'N/A', 'gres/gpu:8', 'N/A', 4, 4), 32),  # gres/gpu not tracked: per node x nodes
    (('cpu=8,node=2', 'N/A', 'N/A', 'gres/gpu:1', 2, 6), 6),  # per task x tasks
    (('cpu=8,node=2', 'gres/gpu:3', 'N/A', 'N/A', 2, 2), 3),  # per job
    (('cpu=8,node=2', 'N/A', 'N/A', 'N/A', 2, 2), 0),
])
def test_requested_gpus(args, gpus):
    assert exporter.requested_gpus(*args) == gpus


def _sshare(text):
    """sshare -P rows as dicts by the exporter's column names (Slurm's own figures, the test's truth)."""
    columns = exporter.COMMANDS['sshare'][-1].split(',')
    return [dict(zip(columns, (c.strip() for c in line.split('|')))) for line in text.splitlines()]


def test_fair_share_is_slurms_own(capture):
    """The figures are sshare's, not a formula of ours: each user's FairShare factor, each account's
    LevelFS (Fair Tree gives accounts no FairShare), shares and usage."""
    m = values(exporter.metrics_from(exporter.scrape(5, run=Replay(capture))[0]))
    rows = _sshare(capture['commands']['sshare']['stdout'])
    users = {(r['User'], r['Account']): float(r['FairShare']) for r in rows if r['User'] and r['Account'] != 'root'}
    assert users and {k[1:]: v for k, v in m.items() if k[0] == 'slurm_user_fairshare'} == users
    accounts = [r for r in rows if not r['User'] and r['Account'] != 'root']
    assert {r['Account'] for r in accounts} == {'research', 'nlp', 'vision'}
    for r in accounts:
        assert m[('slurm_account_level_fairshare', r['Account'])] == float(r['LevelFS'])
        assert m[('slurm_account_shares_normalized', r['Account'])] == float(r['NormShares'])
        assert m[('slurm_account_usage_raw', r['Account'])] == float(r['RawUsage'])
    assert not any(k[0] == 'slurm_account_fairshare' for k in m)


def test_an_unused_account_is_infinitely_below_its_share():
    """Slurm's LevelFS is shares over usage: infinite (sshare prints inf) for an account that used nothing."""
    out = 'vision||60|0.600000|0|0.000000||inf\n vision|vic|1|1.000000|0|0.000000|1.000000|inf\n'
    parsed = exporter.parse_sshare(out)
    assert parsed['accounts']['vision']['level'] == float('inf') and parsed['users'] == {('vision', 'vic'): 1.0}


def test_served_through_prometheus_client(capture):
    from prometheus_client import CollectorRegistry, generate_latest
    registry = CollectorRegistry()
    registry.register(exporter.collector(5, run=Replay(capture, broken=('sshare',))))
    first = generate_latest(registry).decode()
    second = generate_latest(registry).decode()
    assert 'slurm_gpus_alloc 3.0' in first
    assert 'slurm_jobs_pending{partition="gpu",reason="AssocGrpGRES"} 1.0' in first
    assert 'slurm_exporter_command_up{command="sshare"} 0.0' in first
    assert 'slurm_user_fairshare' not in first.replace('# HELP', '')
    assert 'slurm_exporter_command_errors_total{command="sshare"} 1.0' in first
    assert 'slurm_exporter_command_errors_total{command="sshare"} 2.0' in second
    # names of the exporter dashboard 4323 reads, and counters as counters
    assert '# TYPE slurm_scheduler_backfilled_jobs_since_start_total counter' in first
    assert '# TYPE slurm_scheduler_queue_size gauge' in first
    # gauges whatever their name: the GPUs and CPUs there are (not counted up), and a figure that falls back
    # to 0 at each stats cycle
    for name in ('slurm_gpus_total', 'slurm_cpus_total', 'slurm_partition_gpus_total', 'slurm_partition_cpus_total',
                 'slurm_node_gpus_total', 'slurm_node_cpus_total', 'slurm_scheduler_backfilled_jobs_since_cycle_total'):
        assert '# TYPE %s gauge' % name in first, name
    assert '# TYPE slurm_exporter_scrapes_shared_total counter' in generate_latest(registry).decode()
    assert 'slurm_scheduler_agent_queue_size' not in first


class Slow(Replay):
    """A Slurm that takes `delay` seconds per command, or hangs past the budget (timeout) for `broken` ones."""

    def __init__(self, capture, delay, broken=()):
        Replay.__init__(self, capture, broken)
        self.delay, self.lock = delay, threading.Lock()

    def __call__(self, argv, **kwargs):
        with self.lock:
            self.calls.append(argv)
        name = next(n for n, c in self.capture['commands'].items() if c['argv'] == argv)
        if name in self.broken:  # what subprocess.run does with a command that outlives its timeout
            time.sleep(kwargs['timeout'])
            raise subprocess.TimeoutExpired(argv, kwargs['timeout'])
        time.sleep(self.delay)
        c = self.capture['commands'][name]
        return subprocess.CompletedProcess(argv, c['rc'], c['stdout'], c['stderr'])


def test_commands_run_at_once(capture):
    t0 = time.time()
    results, status = exporter.scrape(5, run=Slow(capture, 0.4))
    assert time.time() - t0 < 1.2  # four commands of 0.4 s each: 1.6 s one after another
    assert all(ok for ok, dummy in status.values())


def test_slurmctld_down_the_scrape_ends_within_its_budget(capture):
    """slurmctld does not answer: every command is stopped at the budget, and the scrape
    still answers in time, saying which commands failed."""
    from prometheus_client import CollectorRegistry, generate_latest
    registry = CollectorRegistry()
    registry.register(exporter.collector(1, run=Slow(capture, 0, broken=tuple(exporter.COMMANDS))))
    t0 = time.time()
    text = generate_latest(registry).decode()
    assert time.time() - t0 < 2.5  # within the budget (1 s) and the join's grace, not 4 x 1 s
    for name in exporter.COMMANDS:
        assert 'slurm_exporter_command_up{command="%s"} 0.0' % name in text
    assert 'slurm_gpus_total' not in text.replace('# HELP', '')


def test_overlapping_scrapes_share_one_run(capture):
    slow = Slow(capture, 0.5)
    c = exporter.collector(5, run=slow)
    texts = []
    threads = [threading.Thread(target=lambda: texts.append(list(c.collect()))) for dummy in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert len(slow.calls) == len(exporter.COMMANDS)  # one set of commands for three scrapes
    assert len(texts) == 3 and all(len(t) == len(texts[0]) for t in texts)
    shared = [f for f in list(c.collect()) if f.name == 'slurm_exporter_scrapes_shared']
    assert shared[0].samples[0].value == 2


def test_backfill_cycle_figures_before_the_first_cycle_read_as_zero():
    out = ('Main schedule statistics (microseconds):\n\tLast cycle:   120\n\tMean cycle:   110\n'
           'Backfilling stats\n\tTotal backfilled jobs (since last slurm start): 0\n\tLast cycle when: N/A\n')
    found = exporter.parse_sdiag(out)
    assert found['last_cycle'] == 120 and found['mean_cycle'] == 110
    assert found['backfill_last_cycle'] == 0 and found['backfill_mean_cycle'] == 0 and found['backfill_depth_mean'] == 0


@pytest.mark.parametrize('private, user, hidden', [
    ('none', 'prom', []),
    ('jobs,usage', 'prom', ['jobs', 'usage']),
    ('accounts,jobs,nodes,partitions,reservations,usage,users', 'prom',
     ['accounts', 'jobs', 'nodes', 'partitions', 'reservations', 'usage', 'users']),
    ('jobs,usage', 'slurm', []),  # SlurmUser sees everything
    ('jobs,usage', 'root', []),
])
def test_what_private_data_hides(capture, private, user, hidden):
    text = capture['commands']['config']['stdout']
    assert re.search(r'^PrivateData\s+= none$', text, re.M)  # the lab's: nothing hidden
    text = re.sub(r'(?m)^PrivateData\s+= .*$', 'PrivateData             = ' + private, text)
    config = exporter.parse_config(text)
    assert config['slurm_user'] == 'slurm'
    assert exporter.view_partial(config, user) == hidden
    m = values(exporter.metrics_from(dict(config=config), user=user))
    assert sorted(k[1] for k, v in m.items() if k[0] == 'slurm_exporter_view_partial' and v == 1) == hidden


# --- serving: TLS and basic auth from an exporter-toolkit web config --------

@pytest.fixture
def served(tmp_path):
    """Serve a tiny registry, with or without a web config; yields a function that starts it."""
    from prometheus_client import CollectorRegistry, Gauge
    servers = []

    def start(web_config=''):
        registry = CollectorRegistry()
        Gauge('gpuhpc_probe', 'probe', registry=registry).set(1)
        server = exporter.serve('127.0.0.1:0', registry, web_config)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_address[1]

    yield start
    for server in servers:
        server.shutdown()


def _get(url, auth=None, cafile=None):
    import base64
    import ssl
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url)
    if auth:
        request.add_header('Authorization', 'Basic ' + base64.b64encode(('%s:%s' % auth).encode()).decode())
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ''


def test_without_a_web_config_metrics_are_plain_http(served):
    port = served()
    status, body = _get('http://127.0.0.1:%d/metrics' % port)
    assert status == 200 and 'gpuhpc_probe 1.0' in body


def test_with_a_web_config_only_tls_and_the_right_password_get_metrics(served, tmp_path):
    from ansible_collections.gpuhpc.slurm.plugins.plugin_utils import web_pki
    pki = web_pki.ensure(str(tmp_path / 'pki'), 'ctl', ['127.0.0.1', 'localhost'])
    for name in ('ca', 'cert', 'key'):
        (tmp_path / (name + '.pem')).write_text(pki[name])
    password = 'p@ss: "w0rd"'
    digest = web_pki.bcrypt_hash(password, web_pki.bcrypt_salt('ctl', 'prometheus'), rounds=4)
    (tmp_path / 'web.yml').write_text(web_pki.document(str(tmp_path / 'cert.pem'), str(tmp_path / 'key.pem'),
                                                       'prometheus', digest))
    port = served(str(tmp_path / 'web.yml'))
    url, ca = 'https://127.0.0.1:%d/metrics' % port, str(tmp_path / 'ca.pem')
    assert _get(url, cafile=ca)[0] == 401
    assert _get(url, auth=('prometheus', 'wrong'), cafile=ca)[0] == 401
    assert _get(url, auth=('other', password), cafile=ca)[0] == 401
    for attempt in range(2):  # the second time from what passed before
        status, body = _get(url, auth=('prometheus', password), cafile=ca)
        assert status == 200 and 'gpuhpc_probe 1.0' in body, attempt
    with pytest.raises(Exception):
        _get('http://127.0.0.1:%d/metrics' % port, auth=('prometheus', password))


@pytest.mark.parametrize('text, code', [
    ('Priority', 'Priority'),
    ('AssocGrpGRES', 'AssocGrpGRES'),
    ('ReqNodeNotAvail, UnavailableNodes:gpu-[01-03,07]', 'ReqNodeNotAvail'),
    ('ReqNodeNotAvail, May be reserved for other job', 'ReqNodeNotAvail'),
    # the state description of the 22.05 and 24.11 captures (job 8, job 25)
    ('Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions', 'Resources'),
    ('Nodes required for job are DOWN, DRAINED, REBOOTING or reserved for jobs in higher priority partitions',
     'Resources'),
    ("Job is at or exceeds QOS normal's max TRES(gres/gpu) minutes of 100 with 120", 'Other'),
    ('', 'None'),
])
def test_reason_label_is_slurms_code(text, code):
    assert exporter.reason_code(text) == code


def test_a_job_pending_in_two_partitions_counts_in_each_once_per_account():
    out = ('41|PENDING|gpu,short|nlp|nora|ReqNodeNotAvail, UnavailableNodes:gpu-[01-03,07]|2|1|1|'
           'cpu=2,mem=100M,node=1,billing=2,gres/gpu=2|N/A|gres/gpu:2|N/A|\n'
           '42|PENDING|gpu|nlp|nora|Priority|1|1|1|cpu=1,mem=100M,node=1,billing=1,gres/gpu=1|N/A|gres/gpu:1|N/A|\n')
    m = values(exporter.metrics_from({'squeue': exporter.parse_squeue(out)}))
    assert m[('slurm_partition_jobs_pending', 'gpu')] == 2 and m[('slurm_partition_jobs_pending', 'short')] == 1
    assert m[('slurm_gpus_pending', 'short', 'ReqNodeNotAvail')] == 2
    assert m[('slurm_gpus_pending', 'gpu', 'ReqNodeNotAvail')] == 2 and m[('slurm_gpus_pending', 'gpu', 'Priority')] == 1
    assert m[('slurm_account_jobs_pending', 'nlp')] == 2 and m[('slurm_queue_pending',)] == 2


# sinfo's StateLong: node_state_string() of src/common/slurm_protocol_defs.c (22.05, 24.11), lowercased
@pytest.mark.parametrize('text, state, flags', [
    ('mixed', 'mix', []),
    ('allocated+', 'alloc', ['completing']),
    ('idle*', 'idle', ['not_responding']),
    ('down*', 'down', ['not_responding']),
    ('idle~', 'idle', ['powered_down']),
    ('idle#', 'idle', ['powering_up']),
    ('drained', 'drain', []),
    ('draining@', 'drain', ['reboot_pending']),
    ('drained$', 'drain', ['maint_reservation']),
    ('inval', 'inval', []),
    ('planned', 'planned', []),
    ('mixed-', 'mix', ['planned']),
    ('blocked', 'blocked', []),
    ('reboot^', 'reboot', ['reboot_issued']),
    ('failing*', 'fail', ['not_responding']),
    ('unknown*', 'unknown', ['not_responding']),
    ('future', 'future', []),
    ('cloud', 'other', []),
])
def test_node_state_and_flag(text, state, flags):
    assert exporter.node_state(text) == (state, flags)


def test_every_bad_node_state_is_seen_and_free_gpus_are_usable_ones():
    out = ('a|mixed|gpu*|1/1/0/2|gpu:2|gpu:1(IDX:0)|1|2|up|\n'
           'b|idle*|gpu*|0/2/0/2|gpu:2|gpu:0|0|2|up|\n'
           'c|idle~|gpu*|0/2/0/2|gpu:2|gpu:0|0|2|up|\n'
           'd|inval|gpu*|0/0/2/2|gpu:3|gpu:0|0|2|up|\n'
           'e|down*|gpu*|0/0/2/2|gpu:2|gpu:0|0|2|up|\n'
           'f|drained|gpu*|0/0/2/2|gpu:2|gpu:0|0|2|up|\n')
    m = values(exporter.metrics_from({'sinfo': exporter.parse_sinfo(out)}))
    assert m[('slurm_nodes_inval',)] == 1 and m[('slurm_nodes_idle',)] == 2 and m[('slurm_nodes_other',)] == 0
    assert m[('slurm_nodes_not_responding',)] == 2
    assert m[('slurm_node_state', 'd', 'inval')] == 1
    assert m[('slurm_node_flag', 'b', 'not_responding')] == 1 and m[('slurm_node_flag', 'e', 'not_responding')] == 1
    assert m[('slurm_node_flag', 'c', 'powered_down')] == 1 and ('slurm_node_flag', 'a', 'not_responding') not in m
    # one series a node, as slurm_node_state: a node with no flag says none
    assert m[('slurm_node_flag', 'a', 'none')] == 1 and len([k for k in m if k[0] == 'slurm_node_flag']) == 6
    # only a's free GPU can be given to a job now: b does not answer, c is powered down
    assert m[('slurm_gpus_idle',)] == 1 and m[('slurm_gpus_other',)] == 2 + 2 + 3 + 2 + 2
    assert not any(k[0] == 'slurm_nodes_err' for k in m)


def test_free_gpus_count_only_in_partitions_that_start_jobs():
    """A partition DOWN queues jobs but starts none, an INACTIVE one neither; a DRAINED one starts those
    queued. A node's free GPUs are free for the cluster where one of its partitions starts jobs."""
    out = ('a|idle|gpu*|0/2/0/2|gpu:2|gpu:0|0|2|down|\n'
           'a|idle|short|0/2/0/2|gpu:2|gpu:0|0|2|up|\n'
           'b|idle|gpu*|0/2/0/2|gpu:2|gpu:0|0|2|down|\n'
           'c|idle|old|0/2/0/2|gpu:2|gpu:0|0|2|inactive|\n'
           'd|mixed|closing|1/1/0/2|gpu:2|gpu:1(IDX:0)|1|2|drain|\n')
    m = values(exporter.metrics_from({'sinfo': exporter.parse_sinfo(out)}))
    assert m[('slurm_partition_gpus_idle', 'gpu')] == 0 and m[('slurm_partition_gpus_idle', 'short')] == 2
    assert m[('slurm_partition_gpus_idle', 'old')] == 0 and m[('slurm_partition_gpus_idle', 'closing')] == 1
    assert m[('slurm_gpus_idle',)] == 2 + 1 and m[('slurm_gpus_other',)] == 2 + 2
    assert m[('slurm_partition_gpus_total', 'gpu')] == 4
    assert m[('slurm_partition_state', 'gpu', 'down')] == 1 and m[('slurm_partition_state', 'old', 'inactive')] == 1
    assert m[('slurm_partition_state', 'closing', 'drain')] == 1


def test_a_failing_command_is_served_from_its_last_good_result_with_its_age(capture):
    """One slow command must not make its series go stale (every alert's for: would start over): its last
    good result is served, with its age, for up to keep seconds; then left out."""
    from prometheus_client import CollectorRegistry, generate_latest
    now = [1000.0]
    replay = Replay(capture)
    registry = CollectorRegistry()
    registry.register(exporter.collector(5, run=replay, keep=300, clock=lambda: now[0]))
    first = generate_latest(registry).decode()
    assert 'slurm_exporter_command_age_seconds{command="sshare"} 0.0' in first
    replay.broken = ('sshare',)
    now[0] += 120
    second = generate_latest(registry).decode()
    assert 'slurm_exporter_command_up{command="sshare"} 0.0' in second
    assert 'slurm_exporter_command_age_seconds{command="sshare"} 120.0' in second
    fair = [line for line in first.splitlines() if line.startswith('slurm_user_fairshare{')]
    assert fair and all(line in second.splitlines() for line in fair)
    now[0] += 181
    third = generate_latest(registry).decode()
    assert 'slurm_user_fairshare{' not in third and 'slurm_exporter_command_age_seconds{command="sshare"}' not in third
    assert 'slurm_exporter_command_age_seconds{command="sinfo"} 0.0' in third


def test_the_controller_in_control_is_read_from_scontrol_show_config(capture):
    config = exporter.parse_config(capture['commands']['config']['stdout'])
    assert config['in_control'] == 'ctl'
    text = 'SlurmUser = slurm(64030)\nSlurmctld(primary) at ctl is DOWN\nSlurmctld(backup) at ctl2 is UP\n'
    assert exporter.parse_config(text)['in_control'] == 'ctl2'
    assert exporter.parse_config('SlurmUser = slurm(64030)\n')['in_control'] is None


def test_the_exporter_on_a_backup_controller_stands_by_until_a_takeover(capture):
    """HA: an exporter on each controller; only the one whose controller is in control serves Slurm's figures
    (no sum counts them twice), and the backup's takes over with the controller."""
    import copy
    from prometheus_client import CollectorRegistry, generate_latest
    capture = copy.deepcopy(capture)
    config = capture['commands']['config']
    config['stdout'] += 'Slurmctld(backup) at ctl2 is UP\n'
    replay = Replay(capture)
    registry = CollectorRegistry()
    registry.register(exporter.collector(5, run=replay, controller='ctl2'))
    first = generate_latest(registry).decode()
    assert 'slurm_exporter_standby 1.0' in first and 'slurm_gpus_total' not in first.replace('# HELP', '')
    assert 'slurm_exporter_command_up{command="sinfo"}' not in first
    replay.calls.clear()
    second = generate_latest(registry).decode()
    assert replay.calls == [exporter.COMMANDS['config']]  # a standby asks slurmctld for nothing else
    assert 'slurm_exporter_command_up{command="config"} 1.0' in second
    # the primary goes away; the backup slurmctld takes over
    config['stdout'] = config['stdout'].replace('Slurmctld(primary) at ctl is UP', 'Slurmctld(primary) at ctl is DOWN')
    generate_latest(registry)  # the scrape that learns it
    after = generate_latest(registry).decode()
    assert 'slurm_exporter_standby 0.0' in after and 'slurm_gpus_total' in after
    assert 'slurm_exporter_command_up{command="sinfo"} 1.0' in after
    # the primary's exporter, meanwhile, would stand by; without --controller an exporter never does
    plain = CollectorRegistry()
    plain.register(exporter.collector(5, run=Replay(capture)))
    assert 'slurm_exporter_standby 0.0' in generate_latest(plain).decode()
