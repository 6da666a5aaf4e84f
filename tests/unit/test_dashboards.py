"""The dashboards the grafana role ships: they parse, Grafana can provision
them, every panel queries the provisioned Prometheus data source, and every
query reads only metrics the collection's exporters produce.

The metric contract: node_* names captured from a real node_exporter and
slurm_* names captured from the collection's Slurm exporter, both in the lab
(tests/unit/fixtures/metrics/, each file says how); DCGM names from the
dcgm_exporter role's counters; and up, which Prometheus writes for every
target; series of the collection's recording rules, when the metrics they
are made of are in the contract. Query syntax is checked with promtool in
tests/integration/test_grafana_role.py (promtool is installed there)."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import dashboard_queries as dq  # noqa: E402  pylint: disable=wrong-import-position

DASHBOARD_DIR = os.path.join(ROOT, 'roles', 'grafana', 'files', 'dashboards')
FILES = sorted(glob.glob(os.path.join(DASHBOARD_DIR, '*.json')))
FIXTURES = os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'metrics')
DATASOURCE = {'type': 'prometheus', 'uid': 'gpuhpc-prometheus'}
EXPECTED = {'gpuhpc-overview', 'gpuhpc-gpus', 'gpuhpc-nodes', 'gpuhpc-slurm', 'gpuhpc-team-gpu-usage'}
# Written by Prometheus itself for every scrape target (1: scraped, 0: not).
PROMETHEUS_SYNTHETIC = {'up'}


def load(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def names_from(fixture):
    with open(os.path.join(FIXTURES, fixture), encoding='utf-8') as f:
        return {line.strip() for line in f if line.strip() and not line.startswith('#')}


def node_fixture():
    found = glob.glob(os.path.join(FIXTURES, 'node_exporter-*.txt'))
    assert len(found) == 1, found
    return os.path.basename(found[0])


def dcgm_names():
    with open(os.path.join(ROOT, 'roles', 'dcgm_exporter', 'defaults', 'main.yml'), encoding='utf-8') as f:
        counters = yaml.safe_load(f)['dcgm_exporter_counters']
    # type label fields become a label on every metric, not a metric
    return {c['field'] for c in counters if c['type'] != 'label'}


CONTRACT = dict(node=names_from(node_fixture()), slurm=names_from('slurm_exporter.txt'), dcgm=dcgm_names())


def recorded():
    """Series the collection's recording rules make: {name: the metrics they are made of}."""
    path = os.path.join(ROOT, 'roles', 'prometheus', 'files', 'rules', 'gpuhpc-recording.yml')
    with open(path, encoding='utf-8') as f:
        rules = [r for g in yaml.safe_load(f)['groups'] for r in g['rules']]
    return {r['record']: dq.metric_names(r['expr']) for r in rules}


RECORDED = recorded()


def contract_has(name):
    if name in RECORDED:  # a recorded series holds if what it is made of does
        return all(contract_has(n) for n in RECORDED[name])
    if name.startswith('node_'):
        return name in CONTRACT['node']
    if name.startswith('slurm_'):
        return name in CONTRACT['slurm']
    if name.startswith('DCGM_'):
        return name in CONTRACT['dcgm']
    return name in PROMETHEUS_SYNTHETIC


DASHBOARDS = {os.path.basename(p): load(p) for p in FILES}


# --- the contract itself --------------------------------------------------------------

def test_the_captured_names_are_real_captures():
    node, slurm = CONTRACT['node'], CONTRACT['slurm']
    assert {'node_cpu_seconds_total', 'node_memory_MemAvailable_bytes', 'node_systemd_unit_state',
            'node_timex_offset_seconds', 'node_filesystem_avail_bytes'} <= node
    assert len([n for n in node if n.startswith('node_')]) > 150
    assert all(re.fullmatch('[A-Za-z_:][A-Za-z0-9_:]*', n) for n in node | slurm)
    for fixture in (node_fixture(), 'slurm_exporter.txt'):
        with open(os.path.join(FIXTURES, fixture), encoding='utf-8') as f:
            header = f.readline()
        assert header.startswith('# Metric names (not values)'), fixture


def test_the_slurm_capture_has_every_family_the_exporter_declares():
    """The capture is of the exporter in this repository: every job state and
    sdiag figure it declares is there."""
    path = os.path.join(ROOT, 'roles', 'slurm_exporter', 'files', 'gpuhpc_slurm_exporter.py')
    with open(path, encoding='utf-8') as f:
        source = f.read()
    states = re.search(r'JOB_STATES = \(([^)]*)\)', source).group(1)
    for state in re.findall(r"'(\w+)'", states):
        assert f'slurm_queue_{state}' in CONTRACT['slurm'], state
    sdiag = re.search(r'SDIAG = \((.*?)\n\)', source, re.S).group(1)
    for name in re.findall(r"'(\w+)'\)", sdiag):
        assert f'slurm_scheduler_{name}' in CONTRACT['slurm'], name
    for name in ('slurm_jobs_pending', 'slurm_gpus_pending', 'slurm_account_gpus_running', 'slurm_user_gpus_running',
                 'slurm_exporter_command_errors_total', 'slurm_scheduler_dbd_queue_size'):
        assert name in CONTRACT['slurm'], name


# --- the helper ------------------------------------------------------------------------

NESTED = {
    'uid': 'nested', 'title': 'Nested',
    'templating': {'list': [
        {'name': 'instance', 'type': 'query', 'query': {'query': 'label_values(node_uname_info{job="node"}, instance)',
                                                        'refId': 'PrometheusVariableQueryEditor-VariableQuery'}},
        {'name': 'part', 'type': 'query', 'query': 'query_result(topk(3, slurm_partition_jobs_pending))'},
        {'name': 'label', 'type': 'query', 'query': 'label_values(instance)'},
        {'name': 'topn', 'type': 'custom', 'query': '5,10', 'current': {'text': '5', 'value': '5'}},
    ]},
    'panels': [
        {'type': 'row', 'title': 'collapsed row', 'collapsed': True, 'panels': [
            {'type': 'timeseries', 'title': 'inside', 'targets': [
                {'refId': 'A', 'expr': 'rate(node_cpu_seconds_total{instance=~"$instance"}[$__rate_interval])'},
                {'refId': 'B', 'expr': ''}]}]},
        {'type': 'stat', 'title': 'top', 'targets': [
            {'refId': 'A', 'expr': 'topk($topn, sum_over_time(DCGM_FI_DEV_GPU_UTIL[${__range}:1m]))',
             'instant': True}]},
    ]}


def test_queries_finds_nested_panels_and_variable_queries():
    assert dq.queries(NESTED) == [
        ('inside', 'rate(node_cpu_seconds_total{instance=~"$instance"}[$__rate_interval])'),
        ('top', 'topk($topn, sum_over_time(DCGM_FI_DEV_GPU_UTIL[${__range}:1m]))'),
        ('variable instance', 'node_uname_info{job="node"}'),
        ('variable part', 'topk(3, slurm_partition_jobs_pending)'),
    ]


def test_substitution_gives_plain_promql():
    values = dq.variable_values(NESTED)
    assert values == {'instance': '.+', 'part': '.+', 'label': '.+', 'topn': '5'}
    assert dq.substitute('rate(x{instance=~"$instance"}[$__rate_interval])', values) == 'rate(x{instance=~".+"}[1m])'
    assert dq.substitute('topk($topn, y[${__range}:1m]) * $__range_s', values) == 'topk(5, y[1h:1m]) * 3600'
    assert dq.substitute('z{a=~"[[instance]]"} offset $__interval', values) == 'z{a=~".+"} offset 1m'
    assert dq.substitute('w{a=~"$unknown"}', values) == 'w{a=~"$unknown"}'


@pytest.mark.parametrize('expr, names', [
    ('sum by (instance, gpu) (rate(DCGM_FI_DEV_GPU_UTIL{instance=~".+", gpu="0"}[5m]))', ['DCGM_FI_DEV_GPU_UTIL']),
    ('node_load5 / on (instance) group_left count by (instance) (node_cpu_seconds_total{mode="idle"})',
     ['node_load5', 'node_cpu_seconds_total']),
    ('sum(a_b) without (job) or vector(0) unless on(x) c:d:e offset 5m', ['a_b', 'c:d:e']),
    ('count(x > 0) * 1e9 + 0x1F - Inf + NaN', ['x']),
    ('sum_over_time((sum by (user) (slurm_user_gpus_running{name=~"a b(c)"}))[1h:1m]) / 60', ['slurm_user_gpus_running']),
    ('label_replace(up, "node", "$1", "instance", "([^.]+).*") == bool 1', ['up']),
    ('max(sum by (a) (m1) > bool 0) @ end()', ['m1']),
])
def test_metric_names(expr, names):
    assert dq.metric_names(expr) == names


def test_the_cli_prints_one_json_line_per_query():
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'tests', 'dashboard_queries.py')] + FILES,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    records = [json.loads(line) for line in out]
    assert len(records) == sum(len(dq.records(d)) for d in DASHBOARDS.values())
    for r in records:
        assert {'dashboard', 'panel', 'expr', 'expr_substituted', 'dcgm', 'instant', 'metrics'} <= set(r)
        assert '$' not in r['expr_substituted'], r
        assert '[[' not in r['expr_substituted'], r
        assert r['dcgm'] == any('DCGM_' in n for n in r['metrics']), r
        assert r['metrics'], r
    assert {r['dashboard'] for r in records} == EXPECTED
    assert any(r['dcgm'] for r in records) and not all(r['dcgm'] for r in records)


# --- the dashboards -----------------------------------------------------------------------

def test_the_five_dashboards_are_shipped():
    assert {d['uid'] for d in DASHBOARDS.values()} == EXPECTED
    assert len(DASHBOARDS) == len(EXPECTED)


@pytest.mark.parametrize('name', sorted(DASHBOARDS))
def test_a_dashboard_grafana_can_provision(name):
    d = DASHBOARDS[name]
    assert re.fullmatch('[A-Za-z0-9_-]{1,40}', d['uid'])
    assert d['title'].startswith('GPU HPC / ')
    assert 'gpuhpc' in d['tags']
    assert d.get('id') is None
    assert isinstance(d['schemaVersion'], int) and d['schemaVersion'] >= 39
    assert '${DS_' not in json.dumps(d) and '__inputs' not in d
    panels = dq.panels(d)
    ids = [p['id'] for p in panels]
    assert len(ids) == len(set(ids)), name
    for p in panels:
        pos = p['gridPos']
        assert 0 <= pos['x'] and pos['x'] + pos['w'] <= 24 and pos['h'] > 0, (name, p['title'])
        assert p.get('title'), (name, p)


def test_uids_and_titles_are_unique():
    assert len({d['uid'] for d in DASHBOARDS.values()}) == len(DASHBOARDS)
    assert len({d['title'] for d in DASHBOARDS.values()}) == len(DASHBOARDS)


@pytest.mark.parametrize('name', sorted(DASHBOARDS))
def test_every_panel_queries_the_provisioned_prometheus(name):
    d = DASHBOARDS[name]
    for p in dq.panels(d):
        if p['type'] == 'row':
            assert not p.get('targets'), p['title']
            continue
        assert p.get('datasource') == DATASOURCE, (name, p['title'])
        assert p.get('targets'), (name, p['title'])
        for t in p['targets']:
            assert t.get('datasource', DATASOURCE) == DATASOURCE, (name, p['title'])
            assert t.get('expr', '').strip(), (name, p['title'])
    for v in d['templating']['list']:
        if v['type'] == 'query':
            assert v.get('datasource') == DATASOURCE, (name, v['name'])


@pytest.mark.parametrize('name', sorted(DASHBOARDS))
def test_every_query_reads_only_metrics_the_exporters_produce(name):
    d = DASHBOARDS[name]
    values = dq.variable_values(d)
    unknown = []
    for panel, expr in dq.queries(d):
        names = dq.metric_names(dq.substitute(expr, values))
        assert names, (panel, expr)
        unknown += [(panel, n) for n in names if not contract_has(n)]
    assert not unknown


def test_the_contract_check_catches_a_wrong_name():
    """The check above is not vacuous: a misspelt or foreign metric is caught."""
    for expr in ('rate(node_cpu_seconds{mode="idle"}[1m])', 'slurm_jobs_running', 'DCGM_FI_DEV_GPU_TEMPERATURE',
                 'nvidia_smi_temperature_gpu', 'sum(kube_pod_info)'):
        assert not all(contract_has(n) for n in dq.metric_names(expr)), expr


@pytest.mark.parametrize('name', sorted(DASHBOARDS))
def test_variables_are_defined_and_query_variables_sit_in_regex_matchers(name):
    d = DASHBOARDS[name]
    defined = {v['name']: v['type'] for v in d['templating']['list']}
    for panel, expr in dq.queries(d):
        for var in dq.variables_used(expr):
            assert var in dq.BUILTINS or var in defined, (panel, var)
            if defined.get(var) == 'query':
                # multi-value and All become a regex: only =~ takes them
                assert re.search(r'=~"\$\{?' + var + r'\}?"', expr), (panel, expr)
                assert not re.search(r'[^=!]=\s*"\$\{?' + var, expr), (panel, expr)
    for v in d['templating']['list']:
        if v['type'] == 'query':
            assert v.get('multi') and v.get('includeAll') and v.get('allValue') == '.+', v['name']


def all_metrics(uid):
    d = next(d for d in DASHBOARDS.values() if d['uid'] == uid)
    values = dq.variable_values(d)
    names = {n for query in dq.queries(d) for n in dq.metric_names(dq.substitute(query[1], values))}
    return names | {source for n in names for source in RECORDED.get(n, ())}


def test_the_overview_covers_the_articles_metrics_table():
    """CPU, memory, GPU utilisation, GPU temperature, GPU memory, running jobs,
    queued jobs and node state, on the overview."""
    used = all_metrics('gpuhpc-overview')
    for metric in ('node_cpu_seconds_total', 'node_memory_MemAvailable_bytes', 'DCGM_FI_DEV_GPU_UTIL',
                   'DCGM_FI_DEV_GPU_TEMP', 'DCGM_FI_DEV_FB_USED', 'slurm_queue_running', 'slurm_queue_pending',
                   'slurm_node_state'):
        assert metric in used, metric


def test_the_overview_answers_the_three_questions():
    d = next(d for d in DASHBOARDS.values() if d['uid'] == 'gpuhpc-overview')
    first_row = []
    for p in d['panels'][1:]:
        if p['type'] == 'row':
            break
        first_row.append(p)
    exprs = ' '.join(t['expr'] for p in first_row for t in p['targets'])
    # jobs stuck while GPUs idle: per partition, for the reasons the alert reads (not a limit's wait)
    assert 'slurm_gpus_pending{reason=~"Resources|Priority"}' in exprs and 'slurm_partition_gpus_idle' in exprs
    assert 'slurm_jobs_pending' in exprs
    alert = next(r for g in yaml.safe_load(open(os.path.join(ROOT, 'roles', 'prometheus', 'files', 'rules',
                                                             'gpuhpc-alerts.yml')))['groups']
                 for r in g['rules'] if r.get('alert') == 'SlurmJobsPendingWhileGpusIdle')
    assert 'slurm_gpus_pending{reason=~"Resources|Priority"}' in alert['expr']
    # a GPU running hot
    assert 'DCGM_FI_DEV_GPU_TEMP' in exprs
    # a node down nobody noticed: Slurm's view and Prometheus' own
    assert 'slurm_node_state' in exprs and 'up{job="node"}' in exprs


def test_the_gpu_dashboard_shows_the_slurm_job_and_the_health_counters():
    d = next(d for d in DASHBOARDS.values() if d['uid'] == 'gpuhpc-gpus')
    assert {v['name'] for v in d['templating']['list']} == {'instance', 'gpu'}
    exprs = ' '.join(query[1] for query in dq.queries(d))
    legends = ' '.join(t.get('legendFormat', '') for p in dq.panels(d) for t in p.get('targets', []))
    assert 'hpc_job' in exprs and '{{hpc_job}}' in legends
    for metric in ('DCGM_FI_DEV_GPU_TEMP', 'DCGM_FI_DEV_GPU_UTIL', 'DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_FB_FREE',
                   'DCGM_FI_DEV_POWER_USAGE', 'DCGM_FI_DEV_XID_ERRORS', 'DCGM_EXP_XID_ERRORS_COUNT',
                   'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'DCGM_FI_DEV_ROW_REMAP_FAILURE',
                   'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', 'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL'):
        assert metric in exprs, metric


def test_the_node_slurm_and_team_dashboards_cover_their_layer():
    nodes = all_metrics('gpuhpc-nodes')
    for metric in ('node_cpu_seconds_total', 'node_memory_MemAvailable_bytes', 'node_filesystem_avail_bytes',
                   'node_load5', 'node_network_receive_bytes_total', 'node_timex_offset_seconds',
                   'node_systemd_unit_state'):
        assert metric in nodes, metric
    slurm = all_metrics('gpuhpc-slurm')
    for metric in ('slurm_queue_pending', 'slurm_queue_running', 'slurm_jobs_pending', 'slurm_partition_gpus_total',
                   'slurm_node_state', 'slurm_scheduler_backfill_last_cycle', 'slurm_scheduler_mean_cycle',
                   'slurm_scheduler_dbd_queue_size', 'slurm_exporter_command_up'):
        assert metric in slurm, metric
    teams = all_metrics('gpuhpc-team-gpu-usage')
    assert {'slurm_account_gpus_running', 'slurm_user_gpus_running', 'slurm_user_fairshare',
            'slurm_account_level_fairshare'} <= teams


def test_gpu_hours_are_allocations_summed_per_minute():
    """GPU-hours per account: every minute of the range, the GPUs its running
    jobs hold (the recorded sum per account); summed and / 60 (a sum, so
    minutes without jobs count 0)."""
    d = next(d for d in DASHBOARDS.values() if d['uid'] == 'gpuhpc-team-gpu-usage')
    panel = next(p for p in dq.panels(d) if p['title'] == 'GPU-hours by account')
    [target] = panel['targets']
    assert target['instant'] is True
    assert re.fullmatch(r'sort_desc\(sum_over_time\(account:slurm_account_gpus_running:sum\{account=~"\$account"\}'
                        r'\[\$__range:1m\]\) / 60\)', target['expr']), target['expr']


def test_the_energy_panel_is_the_query_promtool_tests():
    """The energy panel's query, substituted, is the one tests/prometheus/gpu.yml
    evaluates on a GPU used by two jobs one after the other (the hpc_job label
    changes): per-job series are joined before increase()."""
    d = next(d for d in DASHBOARDS.values() if d['uid'] == 'gpuhpc-gpus')
    [record] = [r for r in dq.records(d) if r['panel'] == 'Energy over the time range']
    with open(os.path.join(ROOT, 'tests', 'prometheus', 'gpu.yml'), encoding='utf-8') as f:
        cases = yaml.safe_load(f)['tests']
    [case] = [c for c in cases if c['name'] == 'energy of a GPU over two jobs, as the dashboard reads it']
    tested = ' '.join(case['promql_expr_test'][0]['expr'].split())
    assert tested == ' '.join(dq.substitute(record['expr'], dq.variable_values(d)).split())
    assert 'max without (hpc_job)' in tested


# Panels colour a metric at the thresholds of the alerts on it: the alert
# rules are the one source (warning orange, critical red). Per metric: the
# alerts, the number each rule compares with, and what the panels show of it.
THRESHOLD_ALERTS = {
    'DCGM_FI_DEV_GPU_TEMP': (('GpuTemperatureHigh',), r'>=\s*([0-9.]+)\s*$', lambda v: v),
    'DCGM_FI_DEV_MEMORY_TEMP': (('GpuMemoryTemperatureHigh',), r'>=\s*([0-9.]+)\s*$', lambda v: v),
    'slurm_scheduler_dbd_queue_size': (('SlurmDbdAgentQueueGrowing', 'SlurmDbdAgentQueueNearLimit'),
                                       r'^slurm_scheduler_dbd_queue_size > ([0-9.]+)', lambda v: v),
    # the percent free of local filesystems; the panels show the percent used
    'node_filesystem_avail_bytes': (('NodeFilesystemAlmostFull',), r'\* 100 < ([0-9.]+)\s*$', lambda v: 100 - v),
}


def alert_thresholds(metric):
    alerts, pattern, shown = THRESHOLD_ALERTS[metric]
    path = os.path.join(ROOT, 'roles', 'prometheus', 'files', 'rules', 'gpuhpc-alerts.yml')
    with open(path, encoding='utf-8') as f:
        groups = yaml.safe_load(f)['groups']
    found = {}
    for rule in (r for g in groups for r in g['rules'] if r.get('alert') in alerts):
        found[rule['labels']['severity']] = shown(float(re.search(pattern, rule['expr'].strip(), re.M).group(1)))
    return found


@pytest.mark.parametrize('metric', sorted(THRESHOLD_ALERTS))
def test_panel_thresholds_are_the_alerts(metric):
    expected = alert_thresholds(metric)
    assert set(expected) == {'warning', 'critical'}
    seen = 0
    for d in DASHBOARDS.values():
        for p in dq.panels(d):
            exprs = ' '.join(t.get('expr', '') for t in p.get('targets') or [])
            if metric not in exprs:
                continue
            steps = (p.get('fieldConfig', {}).get('defaults', {}).get('thresholds') or {}).get('steps') or []
            if len(steps) < 2:
                continue  # a panel that colours nothing
            seen += 1
            assert [s['value'] for s in steps[1:]] == [expected['warning'], expected['critical']], (d['uid'], p['title'])
    assert seen > 0


def test_every_recording_rule_feeds_a_dashboard():
    """A recording rule no panel reads is work for nothing (alerts read the
    raw series: they need labels the rules drop)."""
    read = set()
    for d in DASHBOARDS.values():
        values = dq.variable_values(d)
        read |= {n for dummy, expr in dq.queries(d) for n in dq.metric_names(dq.substitute(expr, values))}
    assert set(RECORDED) - read == set()
    for name in RECORDED:
        assert re.fullmatch(r'[a-z_]+:[A-Za-z0-9_]+:[a-z0-9_]+', name), name  # level:metric:operations
