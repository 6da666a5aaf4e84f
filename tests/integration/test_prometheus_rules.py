"""The collection's Prometheus rules (roles/prometheus/files/rules/*.yml)
through the real promtool: `promtool check rules` on every rule file and
`promtool test rules` on every unit test file (tests/prometheus/*.yml).

promtool is required: without it these tests fail, never skip. Debian 12
ships it in the package `prometheus` (2.42), Debian 13 in `promtool`.
GPUHPC_PROMTOOL names other promtool binaries to run instead, separated by
spaces (e.g. a 2.53 and a 3.x one, to check the rules on several versions).

Beside promtool: each alert fires in some test and is expected silent in
another, each recording rule is queried by some test, the rules keep the
collection's conventions, read only metrics the collection's exporters
produce, and a test that expects the wrong thing makes promtool fail."""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES_DIR = os.path.join(ROOT, 'roles', 'prometheus', 'files', 'rules')
RULE_FILES = sorted(glob.glob(os.path.join(RULES_DIR, '*.yml')))
TEST_FILES = sorted(glob.glob(os.path.join(ROOT, 'tests', 'prometheus', '*.yml')))

# Features that are not in Prometheus 2.42 (Debian 12), or are gone in 3.x.
# promtool 2.42 rejects unknown functions by itself; this names the rest.
NOT_PORTABLE = {
    'holt_winters': 'renamed double_exponential_smoothing (and made experimental) in 3.0',
    'double_exponential_smoothing': 'only in 3.x, behind a feature flag',
    'keep_firing_for': 'new in 2.42; older rule checkers reject it',
    'query_offset': 'rule groups have it from 2.53 on',
    'limitk': 'experimental, 2.54 on',
    'limit_ratio': 'experimental, 2.54 on',
    'sort_by_label': 'experimental, 2.49 on',
    'mad_over_time': 'experimental, 2.45 on',
    'info(': 'experimental, 3.x',
}


def _ids(paths):
    return [os.path.relpath(p, ROOT) for p in paths]


def promtools():
    """The promtool binaries to run: GPUHPC_PROMTOOL's, else the one on PATH. Fails (no skip) without one."""
    named = os.environ.get('GPUHPC_PROMTOOL', '').split()
    found = [shutil.which(p) for p in named] if named else [shutil.which('promtool')]
    if not all(found):
        pytest.fail('promtool not found (%s): install it as root (Debian 12: apt-get install prometheus, which ships '
                    '/usr/bin/promtool, and on a host booted with systemd also starts a Prometheus server; Debian 13: '
                    'apt-get install promtool); `make test` does'
                    % (' '.join(named) if named else 'PATH=%s' % os.environ.get('PATH', '')))
    return found


def run_promtool(*args):
    """Run each promtool; fail with its output on a non-zero exit. Returns the outputs."""
    outputs = []
    for tool in promtools():
        proc = subprocess.run([tool] + list(args), cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
        out = proc.stdout + proc.stderr
        version = subprocess.run([tool, '--version'], capture_output=True, text=True, check=False).stdout.split('\n')[0]
        if proc.returncode != 0:
            pytest.fail('%s %s failed (exit %d, %s):\n%s' % (tool, ' '.join(args), proc.returncode, version, out))
        outputs.append(out)
    return outputs


def load(path):
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


def rules():
    """(file, group, rule) for every rule."""
    return [(path, group, rule) for path in RULE_FILES for group in load(path)['groups'] for rule in group['rules']]


def alert_tests():
    """(test file, test group, alert_rule_test entry) for every alert test case."""
    return [(path, group, case) for path in TEST_FILES for group in load(path)['tests']
            for case in group.get('alert_rule_test', [])]


def test_there_are_rules_and_tests():
    assert RULE_FILES, RULES_DIR
    assert TEST_FILES
    assert {os.path.basename(p) for p in RULE_FILES} >= {'gpuhpc-alerts.yml', 'gpuhpc-recording.yml'}


@pytest.mark.parametrize('path', RULE_FILES, ids=_ids(RULE_FILES))
def test_promtool_check_rules(path):
    for out in run_promtool('check', 'rules', path):
        assert 'SUCCESS' in out, out


@pytest.mark.parametrize('path', TEST_FILES, ids=_ids(TEST_FILES))
def test_promtool_test_rules(path):
    for out in run_promtool('test', 'rules', path):
        assert 'SUCCESS' in out and 'FAILED' not in out, out


def test_every_rule_file_is_unit_tested():
    used = set()
    for path in TEST_FILES:
        for name in load(path)['rule_files']:
            used.add(os.path.normpath(os.path.join(os.path.dirname(path), name)))
    assert set(RULE_FILES) <= used, sorted(set(RULE_FILES) - used)


# The dead man's switch: it always fires, by design (its absence is the page).
ALWAYS_FIRING = {'Watchdog'}


def test_every_alert_fires_in_a_test_and_stays_silent_in_another():
    fired, silent = set(), set()
    for dummy, dummy, case in alert_tests():
        expected = case.get('exp_alerts') or []
        if expected:
            fired.update((case['alertname'], a['exp_labels']['severity']) for a in expected)
        else:
            silent.add(case['alertname'])
    alerts = {(r['alert'], r['labels']['severity']) for dummy, dummy, r in rules() if 'alert' in r}
    assert alerts - fired == set(), 'alerts (name, severity) never expected to fire in tests/prometheus'
    assert {a for a, dummy in alerts} - silent - ALWAYS_FIRING == set(), 'alerts never expected silent in tests/prometheus'


def test_every_recording_rule_is_queried_in_a_test():
    queried = ' '.join(case['expr'] for path in TEST_FILES for group in load(path)['tests']
                       for case in group.get('promql_expr_test', []))
    records = {r['record'] for dummy, dummy, r in rules() if 'record' in r}
    assert records
    missing = {name for name in records if not re.search(re.escape(name) + r'(?![\w:])', queried)}
    assert missing == set(), 'recording rules no promql_expr_test reads'


def test_conventions():
    names = set()
    for path, group, rule in rules():
        where = '%s, group %s, rule %s' % (os.path.basename(path), group['name'], rule.get('alert', rule.get('record')))
        assert group['name'].startswith('gpuhpc-'), where
        if 'record' in rule:
            assert re.fullmatch(r'[a-z_]+:[A-Za-z0-9_]+:[a-z0-9_]+', rule['record']), where  # level:metric:operations
            assert rule['record'] not in names, 'recorded twice: ' + where
            names.add(rule['record'])
            assert 'labels' not in rule and 'for' not in rule, where
        else:
            assert re.match(r'^[A-Z][A-Za-z0-9]+$', rule['alert']), where
            assert rule['labels']['severity'] in ('critical', 'warning', 'info'), where
            assert set(rule['annotations']) >= {'summary', 'description'}, where
            text = rule['annotations']['summary'] + rule['annotations']['description']
            assert '$labels' in text or '$value' in text or rule['alert'] in ALWAYS_FIRING, where


def test_rules_run_on_prometheus_2_42_and_3():
    for path in RULE_FILES:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for word, why in NOT_PORTABLE.items():
            assert word not in text, '%s uses %s: %s' % (os.path.basename(path), word, why)


def _metric_names(expr):
    """Metric names in a PromQL expression (identifiers that are not functions, keywords or labels)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)      # strings
    expr = re.sub(r'\{[^}]*\}', '', expr)                 # label matchers
    expr = re.sub(r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', '', expr)
    expr = re.sub(r'\[[^\]]*\]', '', expr)               # ranges
    words = {m.group(0) for m in re.finditer(r'[A-Za-z_:][A-Za-z0-9_:]*', expr)
             if not expr[m.end():].lstrip().startswith('(')}  # not a function
    return words - {'and', 'or', 'unless', 'offset', 'bool'}


def _used_metrics():
    used = set()
    for dummy, dummy, rule in rules():
        used |= _metric_names(rule['expr'])
    return used - {r['record'] for dummy, dummy, r in rules() if 'record' in r}


def test_gpu_rules_read_only_fields_the_dcgm_exporter_role_exports():
    defaults = load(os.path.join(ROOT, 'roles', 'dcgm_exporter', 'defaults', 'main.yml'))
    exported = {c['field'] for c in defaults['dcgm_exporter_counters']}
    dcgm = {m for m in _used_metrics() if m.startswith('DCGM_')}
    assert dcgm >= {'DCGM_FI_DEV_GPU_TEMP', 'DCGM_EXP_XID_ERRORS_COUNT', 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL'}
    assert dcgm - exported == set(), 'fields the rules read but roles/dcgm_exporter does not export'


def test_slurm_rules_read_only_metrics_the_slurm_exporter_produces():
    """Against the collection's exporter run on the lab's captured Slurm 24.11 output."""
    script = os.path.join(ROOT, 'roles', 'slurm_exporter', 'files', 'gpuhpc_slurm_exporter.py')
    spec = importlib.util.spec_from_file_location('gpuhpc_slurm_exporter_for_rules', script)
    exporter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporter)
    with open(os.path.join(ROOT, 'tests', 'unit', 'fixtures', 'slurm_exporter', '24.11.5.json'), encoding='utf-8') as f:
        capture = json.load(f)

    def replay(argv, **dummy):
        c = next(c for c in capture['commands'].values() if c['argv'] == argv)
        return subprocess.CompletedProcess(argv, c['rc'], c['stdout'], c['stderr'])

    results, dummy = exporter.scrape(5, run=replay)
    produced = {family.name for family in exporter.metrics_from(results)}
    with open(script, encoding='utf-8') as f:
        source = f.read()
    produced |= set(re.findall(r"'(slurm_exporter_[a-z_]+)'", source))
    slurm = {m for m in _used_metrics() if m.startswith('slurm_')}
    assert slurm >= {'slurm_node_state', 'slurm_scheduler_dbd_queue_size', 'slurm_gpus_pending'}
    assert slurm - produced == set(), 'metrics the rules read but the Slurm exporter does not produce'


def test_a_wrong_expectation_fails(tmp_path):
    """promtool really compares: a test expecting TargetDown before its `for:` ran out must fail."""
    case = dict(
        rule_files=[os.path.join(RULES_DIR, 'gpuhpc-alerts.yml')],
        evaluation_interval='1m',
        tests=[dict(interval='1m',
                    input_series=[dict(series='up{job="node", instance="gpu-01"}', values='0x10')],
                    alert_rule_test=[dict(eval_time='4m', alertname='TargetDown',
                                          exp_alerts=[dict(exp_labels=dict(severity='warning', job='node',
                                                                           instance='gpu-01'))])])])
    path = tmp_path / 'wrong.yml'
    path.write_text(yaml.safe_dump(case))
    for tool in promtools():
        proc = subprocess.run([tool, 'test', 'rules', str(path)], capture_output=True, text=True, timeout=120,
                              check=False)
        assert proc.returncode != 0, proc.stdout + proc.stderr
        assert 'FAILED' in proc.stdout + proc.stderr


def test_the_hardware_xids_are_one_list():
    """GpuXidHardwareError takes the hardware XIDs (=~), GpuXidError the rest (!~): the same list in both."""
    exprs = {r['alert']: r['expr'] for dummy, dummy, r in rules() if r.get('alert') in ('GpuXidHardwareError', 'GpuXidError')}
    hardware = re.search(r'xid=~"([^"]+)"', exprs['GpuXidHardwareError']).group(1)
    others = re.search(r'xid!~"([^"]+)"', exprs['GpuXidError']).group(1)
    assert hardware == others and '154' in hardware.split('|')
