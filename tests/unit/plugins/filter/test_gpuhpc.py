import base64

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.filter.gpuhpc import (
    FilterModule,
    config_entries,
    gpg_fingerprints,
    inventory_problems,
    key_sha256,
    munge_key_error,
    munge_problems,
    packages_missing,
    probe_address,
    prometheus_samples,
    scrape_targets,
    service_running,
)

REQUIRED = ['slurm_controller', 'slurm_compute']
EXCLUSIVE = [['slurm_controller', 'slurm_compute'], ['monitoring', 'slurm_compute']]
GOOD = {
    'all': ['login', 'ctl', 'gpu-01', 'gpu-02', 'monitor'],
    'ungrouped': [],
    'slurm_login': ['login'],
    'slurm_controller': ['ctl'],
    'slurm_compute': ['gpu-01', 'gpu-02'],
    'monitoring': ['monitor'],
}


def test_a_good_inventory_has_no_problem():
    assert inventory_problems(GOOD, REQUIRED, EXCLUSIVE) == []


def test_a_missing_group_is_named():
    groups = dict(GOOD)
    del groups['slurm_controller']
    problems = inventory_problems(groups, REQUIRED, EXCLUSIVE)
    assert len(problems) == 1
    assert "'slurm_controller' is missing" in problems[0]


def test_an_empty_controller_group_is_named():
    problems = inventory_problems(dict(GOOD, slurm_controller=[]), REQUIRED, EXCLUSIVE)
    assert problems == ["inventory group 'slurm_controller' has no host: put at least one host in it"]


def test_a_host_in_two_exclusive_groups_names_host_and_groups():
    groups = dict(GOOD, monitoring=['monitor', 'gpu-02'])
    problems = inventory_problems(groups, REQUIRED, EXCLUSIVE)
    assert len(problems) == 1
    assert "'gpu-02'" in problems[0]
    assert "'monitoring'" in problems[0] and "'slurm_compute'" in problems[0]


def test_every_problem_is_listed():
    groups = dict(GOOD, slurm_compute=['ctl', 'monitor'])
    del groups['slurm_login']
    problems = inventory_problems(groups, REQUIRED + ['slurm_login'], EXCLUSIVE)
    assert len(problems) == 3


def test_bad_rules_are_refused():
    with pytest.raises(AnsibleFilterError):
        inventory_problems(GOOD, REQUIRED, [['only-one']])
    with pytest.raises(AnsibleFilterError):
        inventory_problems(['not', 'a', 'dict'], REQUIRED, EXCLUSIVE)


def test_munge_key_error():
    assert munge_key_error(base64.b64encode(b'k' * 32).decode()) == ''
    assert munge_key_error('c2hvcnQ=').startswith('munge_key is 5 bytes')
    assert munge_key_error('%%%', 'vault_munge').startswith('vault_munge is not valid base64')


GOOD_MUNGE = dict(key='', others=[], first='ctl', key_host='ctl', key_host_known=True, num_threads=2)


def test_munge_problems_none_for_good_input():
    assert munge_problems(GOOD_MUNGE) == []
    assert munge_problems(dict(GOOD_MUNGE, key=base64.b64encode(b'k' * 32).decode(), key_host_known=False)) == []


def test_munge_problems_each_names_the_variable_and_never_the_key():
    key = base64.b64encode(b'short').decode()
    problems = munge_problems(dict(GOOD_MUNGE, key=key, others=['gpu-01', 'gpu-02'], num_threads=0))
    assert problems[0] == munge_key_error(key)
    assert problems[1:] == [
        'munge_key differs between ctl and gpu-01, gpu-02: a cluster has one munge key; define munge_key once '
        '(e.g. in group_vars/all) or on no host at all',
        'munge_num_threads is 0: give at least 1']
    assert not any(key in p for p in problems)


def test_munge_problems_key_host_only_matters_without_a_key():
    assert munge_problems(dict(GOOD_MUNGE, key_host='nope', key_host_known=False)) == [
        "munge_key_host 'nope' is not a host of the inventory: name the host that holds (or should make) the "
        'munge key, or set munge_key']


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {'async_failures', 'config_entries', 'failure_messages', 'gpg_fingerprints',
                                             'inventory_problems', 'key_sha256', 'munge_key_error', 'munge_problems',
                                             'packages_missing', 'probe_address', 'prometheus_samples',
                                             'scrape_targets', 'service_running'}


def test_prometheus_samples():
    text = '\n'.join([
        '# HELP slurm_gpus_alloc GPUs allocated to jobs',
        '# TYPE slurm_gpus_alloc gauge',
        'slurm_gpus_alloc 1.0',
        'slurm_jobs_pending{partition="gpu",reason="AssocGrpGRES"} 1.0',
        'node_label{text="a } b"} 2 1700000000000',
        'up 1e+00',
    ])
    assert prometheus_samples(text) == {
        'slurm_gpus_alloc': 1.0,
        'slurm_jobs_pending{partition="gpu",reason="AssocGrpGRES"}': 1.0,
        'node_label{text="a } b"}': 2.0,
        'up': 1.0,
    }


def test_prometheus_samples_refuses_a_line_without_a_number():
    with pytest.raises(AnsibleFilterError, match='not a number'):
        prometheus_samples('up one')


def test_scrape_targets():
    hostvars = {
        'ctl': {'ansible_host': 'lab-ctl'},
        'gpu-01': {'ansible_host': 'lab-gpu-01', 'node_exporter_listen_address': '[::]:9200',
                   'web_config_enabled': True},
        'gpu-02': {'prometheus_scrape_host': 'fd00::2'},
    }
    assert scrape_targets(['ctl', 'gpu-01', 'gpu-02'], hostvars, 'node_exporter', '0.0.0.0:9100') == [
        {'host': 'ctl', 'address': 'lab-ctl:9100', 'scheme': 'http'},
        {'host': 'gpu-01', 'address': 'lab-gpu-01:9200', 'scheme': 'https'},
        {'host': 'gpu-02', 'address': '[fd00::2]:9100', 'scheme': 'http'},
    ]
    # an endpoint the switch does not secure stays plain HTTP
    assert scrape_targets(['gpu-01'], hostvars, 'alertmanager', ':9093', secured=False) == [
        {'host': 'gpu-01', 'address': 'lab-gpu-01:9093', 'scheme': 'http'}]


def test_scrape_targets_needs_a_port():
    with pytest.raises(AnsibleFilterError, match="node_exporter_listen_address of ctl, 'localhost', has no port"):
        scrape_targets(['ctl'], {'ctl': {'node_exporter_listen_address': 'localhost'}}, 'node_exporter', ':9100')


def test_packages_missing():
    facts = {'munge': [{'version': '0.5.15'}], 'slurm-client': [{'version': '24.11.5'}]}
    assert packages_missing(['munge', 'slurm-client'], facts) == []
    assert packages_missing(['munge', 'slurmd', 'grafana=12.0.1'], facts) == ['slurmd', 'grafana=12.0.1']
    assert packages_missing('munge', facts) == []
    # No package facts: everything is missing, so the install task runs.
    assert packages_missing(['munge'], None) == ['munge']
    assert packages_missing(['munge'], {}) == ['munge']


def test_config_entries():
    assert config_entries(['/a', '/b'], owner='root', mode='0755') == [
        dict(path='/a', state='directory', owner='root', mode='0755'),
        dict(path='/b', state='directory', owner='root', mode='0755')]
    assert config_entries({'/a/x.json': '{}'}, group='grafana', mode='0644') == [
        dict(path='/a/x.json', content='{}', state='file', group='grafana', mode='0644')]
    assert config_entries(['/a'], state='absent') == [dict(path='/a', state='absent')]
    assert config_entries({'/r/a.yml': 'groups: []\n'}, validate='promtool check rules %s') == [
        dict(path='/r/a.yml', content='groups: []\n', state='file', validate='promtool check rules %s')]
    with pytest.raises(AnsibleFilterError):
        config_entries('/a')


@pytest.mark.parametrize('listen, host, port, url_host', [
    ('0.0.0.0:9100', '127.0.0.1', 9100, '127.0.0.1'),
    (':9100', '127.0.0.1', 9100, '127.0.0.1'),
    ('[::]:9400', '::1', 9400, '[::1]'),
    ('10.0.0.5:9341', '10.0.0.5', 9341, '10.0.0.5'),
    ('[fd00::5]:9090', 'fd00::5', 9090, '[fd00::5]'),
    ('monitor-01:9093', 'monitor-01', 9093, 'monitor-01'),
])
def test_probe_address(listen, host, port, url_host):
    assert probe_address(listen) == dict(host=host, port=port, url_host=url_host)


@pytest.mark.parametrize('bad', ['9100', '0.0.0.0:0', '0.0.0.0:65536', '::9100'])
def test_probe_address_refuses_what_is_no_listen_address(bad):
    with pytest.raises(AnsibleFilterError, match='is not a listen address'):
        probe_address(bad)


def test_failure_messages():
    from ansible_collections.gpuhpc.slurm.plugins.filter.gpuhpc import failure_messages
    assert failure_messages(None, 'slurm') == []
    assert failure_messages(dict(failed=True, msg='bad name'), 'slurm') == ['slurm: bad name']
    loop = dict(failed=True, msg='One or more items failed',
                results=[dict(failed=False, msg='ok'), dict(failed=True, msg='bad interval'),
                         dict(failed=True, msg=['a', 'b'])])
    assert failure_messages(loop, 'grafana') == ['grafana: bad interval', 'grafana: a; b']


# gpg --batch --with-colons --show-keys of a key with a signing subkey (gpg 2.2 layout)
GPG_COLONS = '''pub:-:4096:1:A3C4F0F979CAA22CDBA8F512EE8CBC9E886DDD89:1578675600:::-:::scESC::::::23::0:
fpr:::::::::A3C4F0F979CAA22CDBA8F512EE8CBC9E886DDD89:
uid:-::::1578675600::E0A1A4B0C8F1A1E1B2C3D4E5F6A7B8C9D0E1F2A3::Example Repo <repo@example.org>::::::::::0:
sub:-:4096:1:1234567890ABCDEF:1578675600::::::s::::::23:
fpr:::::::::0123456789abcdef0123456789abcdef12345678:
pub:-:255:22:BBBB:1700000000:::-:::scESC::::::ed25519:::0:
fpr:::::::::bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:
'''.splitlines()


def test_gpg_fingerprints_are_the_primary_keys_only():
    assert gpg_fingerprints(GPG_COLONS) == ['A3C4F0F979CAA22CDBA8F512EE8CBC9E886DDD89',
                                            'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB']
    assert gpg_fingerprints([]) == [] and gpg_fingerprints(None) == []


def test_key_sha256_ignores_version_lines():
    import hashlib
    key = '-----BEGIN PGP PUBLIC KEY BLOCK-----\nVersion: GnuPG v2\n\nmQINBF...\n-----END PGP PUBLIC KEY BLOCK-----\n'
    bare = key.replace('Version: GnuPG v2\n', '')
    want = hashlib.sha256(bare.encode()).hexdigest()
    assert key_sha256(base64.b64encode(key.encode()).decode()) == want
    assert key_sha256(base64.b64encode(bare.encode()).decode()) == want


def test_service_running_reads_the_lab_hosts_service_facts():
    """The services of a lab GPU node as host_facts read them (systemctl output captured there)."""
    import os
    from ansible_collections.gpuhpc.slurm.plugins.module_utils import installed
    here = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'installed')

    def read(name):
        with open(os.path.join(here, name)) as f:
            return f.read()
    services = installed.parse_services(read('systemctl-units-trixie-gpu-node.txt'),
                                        read('systemctl-unit-files-trixie-gpu-node.txt'))
    assert service_running('munge', services)
    assert service_running('slurmd.service', services)
    assert service_running('prometheus-node-exporter', services)
    assert service_running('dbus', services)  # static
    assert not service_running('slurmctld', services)  # not on a node
    assert not service_running('apt-daily', services)  # not running
    assert not service_running('NetworkManager', services)  # not found


@pytest.mark.parametrize('unit, running', [
    ({'state': 'running', 'status': 'enabled'}, True),
    ({'state': 'running', 'status': 'disabled'}, False),
    ({'state': 'stopped', 'status': 'enabled'}, False),
    ({'state': 'failed', 'status': 'enabled'}, False),
    ({'state': 'running', 'status': 'masked'}, False),
    ({'state': 'running', 'status': 'generated'}, True),
])
def test_service_running_needs_running_and_enabled(unit, running):
    assert service_running('x', {'x.service': unit}) is running


def test_service_running_without_facts_says_no_so_that_the_start_task_runs():
    assert service_running('munge', None) is False
    assert service_running('munge', {}) is False


def test_async_failures_name_every_host_that_did_not_switch():
    from ansible_collections.gpuhpc.slurm.plugins.filter.gpuhpc import async_failures
    done = dict(finished=1, rc=0, failed=False)
    hostvars = {'ctl': dict(sw=done), 'gpu-01': dict(sw=dict(done, rc=1, failed=True)),
                'gpu-02': dict(sw=dict(unreachable=True)), 'gpu-03': dict(sw=dict(finished=0)),
                'gpu-04': {}, 'login': dict(sw=done)}
    assert async_failures(['ctl', 'gpu-01', 'gpu-02', 'gpu-03', 'gpu-04', 'login', 'gone'], hostvars, 'sw') == [
        'gpu-01', 'gpu-02', 'gpu-03', 'gpu-04', 'gone']
    assert async_failures(['ctl', 'login'], hostvars, 'sw') == []
