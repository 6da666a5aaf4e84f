"""gpuhpc.slurm.prometheus: bad input stops the role before anything changes
on the monitoring host, with a message naming the variable or the file. The
role's preflight runs against local hosts (the inventory of test_bad_input);
nothing is installed. promtool is on this machine (make test installs it)."""
import pytest

from test_bad_input import run

PREFLIGHT = '''
- hosts: ctl
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.prometheus
        tasks_from: preflight
'''

BROKEN_RULES = '''groups:
  - name: site
    rules:
      - alert: Broken
        expr: up ==
'''


def test_good_input_passes(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT)
    assert rc == 0, out


@pytest.mark.parametrize('group_vars, message', [
    (dict(prometheus_node_exporter_hosts=[]),
     'prometheus_node_exporter_hosts is empty: no host to scrape node_exporter on (give a list of inventory hosts)'),
    (dict(prometheus_slurm_exporter_hosts=[]),
     'prometheus_slurm_exporter_hosts is empty: put a host in slurm_controller or give the host that runs the Slurm exporter'),
    (dict(prometheus_dcgm_exporter_hosts=['gpu-09']), "scrape target 'gpu-09' is not a host of the inventory"),
    (dict(prometheus_listen_address='localhost'), "prometheus_listen_address 'localhost' is not ADDRESS:PORT (e.g. 0.0.0.0:9090)"),
    (dict(prometheus_retention_time='30 days'), "prometheus_retention_time is not a Prometheus duration (e.g. 15s, 30d)"),
    (dict(prometheus_retention_size='lots'), "prometheus_retention_size 'lots' is not a size (e.g. 500GB, or 0 for no limit)"),
    (dict(prometheus_alertmanagers=['http://am:9093']), "prometheus_alertmanagers: 'http://am:9093' is not HOST:PORT"),
    (dict(web_config_enabled=True, web_config_password=''),
     'web_config_password is empty: web_config_enabled needs the scrape password (vault it)'),
])
def test_bad_input_is_named(tmp_path, group_vars, message):
    rc, out = run(tmp_path, PREFLIGHT, group_vars)
    assert rc != 0
    assert message in out, out


def test_exporters_behind_tls_need_the_switch_on_the_monitoring_host_too(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT, node_vars=dict(slurm_node_gpus=dict(count=2), web_config_enabled=True))
    assert rc != 0
    assert ('web_config_enabled is true on gpu-01 and false on ctl, which scrapes them: turn it on for the whole '
            'cluster (group_vars/all), or off on those hosts') in out, out


def test_a_rule_file_promtool_refuses_stops_the_role(tmp_path):
    rules = tmp_path / 'site-rules.yml'
    rules.write_text(BROKEN_RULES)
    rc, out = run(tmp_path, PREFLIGHT, dict(prometheus_rules_extra=[str(rules)]))
    assert rc != 0
    assert 'promtool refuses these rule files: %s' % rules in out, out
    assert 'could not parse expression' in out, out


def test_the_collection_rules_pass(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT)
    assert rc == 0, out
    assert 'promtool check rules' in out or 'gpuhpc-alerts.yml' in out, out


@pytest.mark.parametrize('group_vars, message', [
    (dict(prometheus_install='release'),
     'prometheus_release_sha256 is not a SHA-256 (64 hex digits): prometheus_install: release needs the one of the '
     "release tarball (its line in the release's sha256sums.txt)"),
    (dict(prometheus_install='release', prometheus_release_sha256='b' * 64, prometheus_release_url=''),
     'prometheus_release_url and prometheus_release_file are both empty: say where the release tarball comes from'),
    (dict(prometheus_install='release', prometheus_release_sha256='b' * 64, prometheus_version='v3.5.0'),
     "prometheus_version 'v3.5.0' is not a release version such as 3.5.0 (no leading v)"),
])
def test_a_release_install_must_be_pinned(tmp_path, group_vars, message):
    rc, out = run(tmp_path, PREFLIGHT, group_vars)
    assert rc != 0
    assert message in out, out


def test_a_pinned_release_passes(tmp_path):
    rc, out = run(tmp_path, PREFLIGHT, dict(prometheus_install='release', prometheus_release_sha256='b' * 64))
    assert rc == 0, out


# the preflight's play, its role's variables kept, then the template rendered to a file
RENDER = PREFLIGHT.rstrip('\n') + '''
        public: true
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.prometheus
        tasks_from: targets
        public: true
    - ansible.builtin.set_fact:
        web_config_result: {{enabled: true, username: prometheus, password_file: /etc/prometheus/scrape.pass,
                            ca_file: /etc/prometheus/ca.crt}}
    - ansible.builtin.copy:
        content: "{{{{ lookup('ansible.builtin.template', '{template}') }}}}"
        dest: {dest}
        mode: "0644"
      delegate_to: localhost
'''


def test_the_scrape_password_goes_to_https_targets_only(tmp_path):
    """web_config_enabled turned on host by host: the monitoring host (ctl) on, gpu-01 not yet. node_exporter's
    job is then two scrape configs, and only the https one has the password; both keep the job label node."""
    import os
    import yaml
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dest = tmp_path / 'prometheus.yml'
    playbook = RENDER.format(template=os.path.join(root, 'roles', 'prometheus', 'templates', 'prometheus.yml.j2'),
                             dest=dest)
    rc, out = run(tmp_path, playbook, dict(web_config_enabled=True, web_config_password='scrape-secret'),
                  node_vars=dict(slurm_node_gpus=dict(count=2), web_config_enabled=False))
    assert rc == 0, out
    jobs = dict((j['job_name'], j) for j in yaml.safe_load(dest.read_text())['scrape_configs'])
    node, plain = jobs['node'], jobs['node-http']
    assert node['scheme'] == 'https' and node['basic_auth']['password_file'] == '/etc/prometheus/scrape.pass'
    assert [c['labels']['instance'] for c in node['static_configs']] == ['ctl']
    assert 'basic_auth' not in plain and plain.get('scheme', 'http') == 'http'
    assert [c['labels']['instance'] for c in plain['static_configs']] == ['gpu-01']
    assert plain['relabel_configs'] == [{'target_label': 'job', 'replacement': 'node'}]
    # a job all on one side stays one config under its own name
    assert 'slurm-http' not in jobs and jobs['slurm']['scheme'] == 'https'
