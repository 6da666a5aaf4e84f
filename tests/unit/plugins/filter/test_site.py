import copy
import hashlib

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.filter.site import (
    FilterModule,
    code_digest,
    inventory_values,
    site_converge_records,
    site_converged,
    site_inventory_digest,
    site_whole_run,
)

RECORD = '/var/lib/gpuhpc/converged'
SETTINGS = dict(record=RECORD, compute=['gpu-01', 'GPU-02'], controllers=['ctl'], controller_files=['/etc/munge/munge.key', '/etc/slurm/*'],
                ignore=['/var/lib/slurm/*'], ansible_version='2.18.19')
DAY = '2026-12-06'


def state(sha=None, kind='file', mode='0644'):
    s = dict(state=kind, owner='root', group='root', mode=mode)
    if sha:
        s['sha256'] = sha
    return s


def files(paths):
    """The fact file_states (module_utils file_states.read)."""
    return dict(patterns=['/etc/slurm/*', '/var/lib/slurm/*', RECORD], paths=paths)


def hostvars():
    node = dict(
        ansible_facts=dict(
            distribution='Debian', processor_vcpus=8, memtotal_mb=16000,
            packages={'slurmd': [dict(version='24.11.5')]},
            services={'slurmd.service': dict(state='running', status='enabled')},
            paths={'/etc/gpuhpc/web/*': []},
            tcp_listening=[22, 6818],
            file_states=files({'/etc/slurm/gres.conf': state('aa'), '/var/lib/slurm/slurmd': state(kind='directory'),
                               '/var/lib/slurm/cred_state': state('01')})),
        slurm_node_gpus=dict(count=2))
    ctl = dict(ansible_facts=dict(
        distribution='Debian', packages={'slurmctld': [dict(version='24.11.5')]},
        file_states=files({'/etc/munge/munge.key': state('k1', mode='0400'), '/etc/slurm/slurm.conf': state('s1'),
                           '/var/lib/slurm/job_state': state('j1')})))
    return {'gpu-01': node, 'GPU-02': copy.deepcopy(node), 'ctl': ctl}


def records(hv, inventory='inv', settings=None, day=DAY):
    return site_converge_records(['gpu-01', 'GPU-02'], hv, inventory, settings or SETTINGS, today=day)


def recorded(hv, contents):
    """The hosts as after site.yml's record play: each node holds its record."""
    for node, content in contents.items():
        sha = hashlib.sha256(content.encode()).hexdigest()
        hv[node]['ansible_facts']['file_states']['paths'][RECORD] = state(sha, mode='0600')
    return hv


def test_a_record_is_a_line_with_the_day_and_differs_per_node():
    r = records(hostvars())
    assert sorted(r) == ['GPU-02', 'gpu-01']
    assert r['gpu-01'].startswith('gpuhpc.slurm site.yml converged this node on 2026-12-06: ')
    assert r['gpu-01'].endswith('\n') and len(r['gpu-01'].split(': ')[1].strip()) == 64
    assert r['gpu-01'] == records(hostvars())['gpu-01']


def test_nodes_whose_record_matches_are_converged_and_the_record_itself_is_not_an_input():
    hv = recorded(hostvars(), records(hostvars()))
    assert site_converged(records(hv), hv, RECORD) == ['GPU-02', 'gpu-01']
    assert site_converged(records(hv), hv, RECORD, full_run=True) == []


@pytest.mark.parametrize('change', [
    'own_file', 'own_file_added', 'own_package', 'own_service', 'own_path', 'hardware', 'other_node_hardware',
    'controller_key', 'controller_slurm_conf', 'controller_package', 'controller_without_facts', 'inventory', 'day',
    'ansible_version', 'no_record', 'node_without_facts'])
def test_any_input_a_role_reads_makes_a_node_run_again(change):
    hv = recorded(hostvars(), records(hostvars()))
    day, inventory, settings = DAY, 'inv', dict(SETTINGS)
    node, ctl = hv['gpu-01']['ansible_facts'], hv['ctl']['ansible_facts']
    if change == 'own_file':
        node['file_states']['paths']['/etc/slurm/gres.conf']['mode'] = '0600'
    elif change == 'own_file_added':
        node['file_states']['paths']['/etc/slurm/plugstack.conf'] = state('bb')
    elif change == 'own_package':
        node['packages']['slurmd'][0]['version'] = '24.11.6'
    elif change == 'own_service':
        node['services']['slurmd.service']['state'] = 'stopped'
    elif change == 'own_path':
        node['paths']['/etc/gpuhpc/web/*'] = ['/etc/gpuhpc/web/node_exporter']
    elif change == 'hardware':
        node['memtotal_mb'] = 32000
    elif change == 'other_node_hardware':
        hv['GPU-02']['ansible_facts']['processor_vcpus'] = 16
    elif change == 'controller_key':
        ctl['file_states']['paths']['/etc/munge/munge.key']['sha256'] = 'k2'
    elif change == 'controller_slurm_conf':
        ctl['file_states']['paths']['/etc/slurm/slurm.conf']['sha256'] = 's2'
    elif change == 'controller_package':
        ctl['packages']['slurmctld'][0]['version'] = '25.05.1'
    elif change == 'controller_without_facts':  # --limit: the controller's facts were not read
        hv['ctl'] = {}
    elif change == 'inventory':
        inventory = 'inv2'
    elif change == 'day':
        day = '2026-12-07'
    elif change == 'ansible_version':
        settings['ansible_version'] = '2.19.0'
    elif change == 'no_record':
        del node['file_states']['paths'][RECORD]
    elif change == 'node_without_facts':  # every node's record holds the others' hardware
        hv['gpu-01'] = {}
    converged = site_converged(records(hv, inventory, settings, day), hv, RECORD)
    if change in ('own_file', 'own_file_added', 'own_package', 'own_service', 'own_path', 'no_record'):
        assert converged == ['GPU-02']
    else:
        assert converged == []


def test_what_changes_as_a_node_works_is_left_out():
    hv = recorded(hostvars(), records(hostvars()))
    hv['gpu-01']['ansible_facts']['file_states']['paths']['/var/lib/slurm/cred_state']['sha256'] = '02'
    hv['gpu-01']['ansible_facts']['file_states']['paths']['/var/lib/slurm/hash.3'] = state(kind='directory')
    hv['gpu-01']['ansible_facts']['tcp_listening'] = [22]
    hv['ctl']['ansible_facts']['file_states']['paths']['/var/lib/slurm/job_state']['sha256'] = 'j2'
    assert site_converged(records(hv), hv, RECORD) == ['GPU-02', 'gpu-01']


def test_a_record_for_some_nodes_is_the_one_for_all():
    hv = hostvars()
    assert site_converge_records(['GPU-02'], hv, 'inv', SETTINGS, today=DAY) == {'GPU-02': records(hv)['GPU-02']}
    assert site_converge_records([], hv, 'inv', SETTINGS, today=DAY) == {}


def test_settings_must_be_complete_and_nodes_compute_nodes():
    with pytest.raises(AnsibleFilterError, match='settings needs record, compute, controllers'):
        site_converge_records(['gpu-01'], hostvars(), 'inv', dict(record=RECORD))
    with pytest.raises(AnsibleFilterError, match='not compute nodes: ctl'):
        site_converge_records(['gpu-01', 'ctl'], hostvars(), 'inv', SETTINGS)


class FailingVars(dict):
    def __getitem__(self, name):
        if name == 'broken':
            raise RuntimeError('lookup failed')
        return dict.__getitem__(self, name)


def test_inventory_values_leave_out_the_run_and_the_runtime_facts():
    variables = FailingVars(slurm_cluster_name='gpu', groups={}, omit='__omit_place_holder__1234',
                            ansible_facts={'a': 1}, ansible_check_mode=True, ansible_run_tags=['all'],
                            inventory_hostname='gpu-01', __slurm_config_run={}, site_full_run=True,
                            ansible_host='10.0.0.1', broken='{{ lookup("file", "x") }}')
    assert inventory_values(variables) == dict(slurm_cluster_name='gpu', ansible_host='10.0.0.1',
                                               broken='<RuntimeError>')


def test_inventory_digest_follows_every_host_and_the_groups():
    hv = {'a': dict(x=1), 'b': dict(x=2, omit='__omit_1')}
    groups = {'all': ['a', 'b'], 'slurm_compute': ['b']}
    first = site_inventory_digest(['a', 'b'], hv, groups)
    assert first == site_inventory_digest(['a', 'b'], {'a': dict(x=1), 'b': dict(x=2, omit='__omit_2')}, groups)
    assert first != site_inventory_digest(['a', 'b'], {'a': dict(x=1), 'b': dict(x=3)}, groups)
    assert first != site_inventory_digest(['a', 'b'], hv, dict(groups, slurm_compute=['a', 'b']))
    with pytest.raises(AnsibleFilterError, match='groups variable'):
        site_inventory_digest(['a'], hv, None)


def test_code_digest_follows_the_collections_files(tmp_path):
    (tmp_path / 'roles' / 'r' / 'templates').mkdir(parents=True)
    (tmp_path / 'roles' / 'r' / '__pycache__').mkdir()
    (tmp_path / 'roles' / 'r' / 'templates' / 'a.j2').write_text('a')
    first = code_digest(str(tmp_path))
    assert len(first) == 64 and code_digest(str(tmp_path)) == first
    (tmp_path / 'roles' / 'r' / '__pycache__' / 'x.pyc').write_text('x')
    other = tmp_path / 'copy'
    (other / 'roles' / 'r' / 'templates').mkdir(parents=True)
    (other / 'roles' / 'r' / 'templates' / 'a.j2').write_text('b')
    assert code_digest(str(other)) != first
    assert len(code_digest()) == 64


@pytest.mark.parametrize('skip, run, whole', [
    ([], ['all'], True),
    (None, None, True),
    (['molecule-notest', 'notest', 'molecule-idempotence-notest'], ['all'], True),
    (['verify'], ['all'], True),
    ([], ['slurmd_configure'], False),
    ([], ['all', 'verify'], False),
    (['slurmd_run'], ['all'], False),
    (['dcgm_exporter_install', 'notest'], ['all'], False),
    (['always'], ['all'], False),
    (['tagged'], ['all'], False),
])
def test_a_whole_run_leaves_every_role_task_in(skip, run, whole):
    assert site_whole_run(skip, run) is whole


def test_filters_are_registered():
    assert sorted(FilterModule().filters()) == ['site_converge_records', 'site_converged', 'site_inventory_digest',
                                                'site_whole_run']
