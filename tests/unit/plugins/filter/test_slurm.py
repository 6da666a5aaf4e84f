import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import (
    FilterModule,
    slurm_cluster_name_error,
    slurm_conf_extra_problems,
    slurm_conf_merge,
    slurm_config_change,
    slurm_config_behind,
    slurm_nodes_changed,
    slurm_gpu_change_problems,
    slurm_nodes_service,
    slurm_nodes_taken_out,
    slurm_users_unknown,
    slurm_conf_cache_stale,
    slurm_conf_digests,
    slurm_config_change_text,
    slurm_first_job_id,
    slurm_hosts_without_facts,
    slurm_nodes,
    slurm_problems,
    slurm_state_plan,
    slurm_partitions,
    slurm_version,
)

FACTS = dict(processor_vcpus=64, processor_count=2, processor_cores=16, processor_threads_per_core=2,
             memtotal_mb=515000)


def node(**extra):
    return dict(dict(ansible_facts=FACTS), **extra)


def test_hosts_without_facts_are_those_lacking_memory_in_order():
    hostvars = {'gpu-01': node(), 'gpu-02': dict(ansible_facts=dict(distribution='Debian')), 'gpu-03': {},
                'Gpu-04': dict(ansible_facts=None), 'cpu-05': node(slurm_node_real_memory=8000)}
    assert slurm_hosts_without_facts(['Gpu-04', 'gpu-01', 'gpu-02', 'gpu-03', 'cpu-05'], hostvars) == [
        'Gpu-04', 'gpu-02', 'gpu-03']
    assert slurm_hosts_without_facts([], hostvars) == []


def test_identical_nodes_fold_into_one_line():
    hostvars = dict(('gpu-%02d' % i, node(slurm_node_gpus=dict(count=8, type='h100'))) for i in range(1, 13))
    result = slurm_nodes(sorted(hostvars), hostvars, 1024, '', 1024)
    assert result['problems'] == []
    assert len(result['nodes']) == 1
    n = result['nodes'][0]
    assert n['name'] == 'gpu-[01-12]'
    assert (n['cpus'], n['sockets'], n['cores_per_socket'], n['threads_per_core']) == (64, 2, 16, 2)
    assert n['real_memory'] == 513024  # 515000 - 1024, rounded down to GiB
    assert n['gpus'] == dict(count=8, type='h100', files='/dev/nvidia[0-7]')
    assert result['def_mem_per_cpu'] == 513024 // 64


@pytest.mark.parametrize('memtotal', [515000, 514990, 514100])
def test_memory_that_moves_by_a_few_mib_keeps_the_node_line(memtotal):
    # a kernel update moved MemTotal: RealMemory (and DefMemPerCPU) changed, slurmctld and every slurmd restarted
    hostvars = {'gpu-01': node(ansible_facts=dict(FACTS, memtotal_mb=memtotal))}
    result = slurm_nodes(['gpu-01'], hostvars, 1024, '', 1024)
    assert result['nodes'][0]['real_memory'] == 513024
    assert result['def_mem_per_cpu'] == 8016


def test_node_memory():
    from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import node_memory
    assert node_memory(515000, 1024, 1024) == 513024
    assert node_memory(515000, 1024, 1) == 513976
    assert node_memory(1500, 1024, 1024) == 476  # below one granule: as it is
    assert node_memory(100, 1024, 1024) == 1


def test_different_nodes_stay_apart_and_explicit_values_win():
    hostvars = {
        'gpu-01.cluster.example': node(slurm_node_gpus=dict(count=2)),
        'gpu-02.cluster.example': node(slurm_node_gpus=dict(count=4), slurm_node_real_memory=1000),
        'cpu-01.cluster.example': node(),
    }
    result = slurm_nodes(list(hostvars), hostvars)
    assert [n['name'] for n in result['nodes']] == ['gpu-01', 'gpu-02', 'cpu-01']
    assert result['nodes'][1]['real_memory'] == 1000
    assert result['nodes'][2]['gpus'] is None


def test_gpus_without_count_name_the_host_and_the_fix():
    result = slurm_nodes(['gpu-01'], {'gpu-01': node(slurm_node_gpus=dict(files='/dev/nvidia[0-1]'))})
    assert result['problems'] == ['gpu-01: slurm_node_gpus has no count: give count (the number of GPUs), e.g. {count: 2}']


def test_device_files_must_match_the_count():
    result = slurm_nodes(['gpu-01'], {'gpu-01': node(slurm_node_gpus=dict(count=2, files='/dev/nvidia[0-2]'))})
    assert result['problems'] == [
        'gpu-01: slurm_node_gpus.files /dev/nvidia[0-2] names 3 device(s) but count is 2: make them agree']


def test_autodetect_needs_no_files():
    result = slurm_nodes(['gpu-01'], {'gpu-01': node(slurm_node_gpus=dict(count=2))}, 0, 'nvml')
    assert result['nodes'][0]['gpus']['files'] == ''


def test_missing_facts_are_reported():
    result = slurm_nodes(['gpu-01'], {'gpu-01': {}})
    assert 'gpu-01: no hardware facts and no slurm_node_cpus: gather facts on the node or set slurm_node_cpus' \
        in result['problems']
    assert len(result['problems']) == 5  # memory, cpus, sockets, cores, threads


def test_partitions_default_to_every_compute_node():
    result = slurm_partitions([dict(name='gpu', default=True)], ['gpu-01', 'gpu-02'])
    assert result == dict(partitions=[dict(name='gpu', default=True, nodes='gpu-[01-02]')], problems=[])


def test_a_partition_naming_an_unknown_node():
    result = slurm_partitions([dict(name='big', nodes='gpu-[01-03]')], ['gpu-01', 'gpu-02'])
    assert result['problems'] == [
        "partition 'big' names node 'gpu-03', which is not a compute node: "
        "add it to the slurm_compute group or remove it from the partition"]


def test_partition_problems():
    assert slurm_partitions([], ['n1'])['problems'] == ['slurm_partitions is empty: define at least one partition']
    assert slurm_partitions([dict(nodes='n1')], ['n1'])['problems'] == [
        'slurm_partitions[0] has no name: give each partition a name']
    assert "defined twice" in slurm_partitions([dict(name='a'), dict(name='a')], ['n1'])['problems'][0]


@pytest.mark.parametrize('name', ['gpulab', 'cluster_1', 'a' * 40, 'prod-a100', '2024-lab'])
def test_good_cluster_names(name):
    assert slurm_cluster_name_error(name) == ''


@pytest.mark.parametrize('name', ['GPU', 'My-Cluster', 'a' * 41, '', 'lab cluster', '-lab', 'a.b'])
def test_bad_cluster_names(name):
    message = slurm_cluster_name_error(name)
    assert message == ("slurm_cluster_name '%s' is not a name Slurm accepts: use 1 to 40 lowercase letters, digits, "
                       "'-' or '_', starting with a letter or digit (it names tables in the accounting database, "
                       "and Slurm lower-cases it)" % name)


def test_extra_keys():
    assert slurm_conf_extra_problems({'SchedulerParameters': 'x', 'MaxJobcount': 1}) == []
    assert slurm_conf_extra_problems({'Foo': 1}) == [
        "slurm_conf_extra: 'Foo' is not a slurm.conf option (see man slurm.conf); check its spelling"]


def test_extra_keys_the_collection_writes_are_refused_by_name():
    assert slurm_conf_extra_problems({'StateSaveLocation': '/srv', 'clustername': 'x', 'TaskPlugin': 'task/cgroup'}) == [
        "slurm_conf_extra: 'StateSaveLocation' is written by the collection; set it with slurm_state_save_location",
        "slurm_conf_extra: 'clustername' is written by the collection; set it with slurm_cluster_name"]
    assert slurm_conf_extra_problems({'Prolog': '/x'}) == []
    assert slurm_conf_extra_problems({'Prolog': '/x'}, managed={'Prolog': 'a program in slurm_facts_prolog_dir'}) == [
        "slurm_conf_extra: 'Prolog' is written by the collection; set it with a program in slurm_facts_prolog_dir"]


def test_a_prolog_of_the_sites_own_is_refused_only_where_the_gpu_job_map_writes_one():
    assert slurm_problems(dict(GOOD, conf_extra={'Epilog': '/x'}, gpu_job_map_dir='')) == []
    assert slurm_problems(dict(GOOD, conf_extra={'Epilog': '/x'})) == [
        "slurm_conf_extra: 'Epilog' is written by the collection; set it with a program in the folder "
        "slurm_facts_epilog_dir (slurm.conf runs every one there)"]


BASE = {'ClusterName': 'lab', 'SlurmctldParameters': 'enable_configless', 'PrologFlags': 'Alloc',
        'ReturnToService': 2, 'AccountingStorageTRES': 'gres/gpu', 'SchedulerParameters': None}


def test_merge_keeps_the_collections_items_of_a_comma_list():
    # the site's SlurmctldParameters once dropped enable_configless (every configless node went DOWN),
    # its AccountingStorageTRES gres/gpu (slurmctld died on the default GPU TRESBillingWeights)
    merged = slurm_conf_merge(BASE, {'SlurmctldParameters': 'enable_rpc_queue',
                                     'accountingstoragetres': 'gres/gpu:a100, license/matlab',
                                     'PrologFlags': 'alloc,Contain', 'ReturnToService': 1})
    assert merged == [['ClusterName', 'lab'], ['SlurmctldParameters', 'enable_configless,enable_rpc_queue'],
                      ['PrologFlags', 'Alloc,Contain'], ['ReturnToService', 1],
                      ['AccountingStorageTRES', 'gres/gpu,gres/gpu:a100,license/matlab']]


def test_merge_writes_a_list_key_the_collection_leaves_out_and_new_keys_after():
    assert slurm_conf_merge(BASE, {'MaxJobCount': 50000, 'SchedulerParameters': 'bf_continue,bf_interval=60'})[-2:] == [
        ['SchedulerParameters', 'bf_continue,bf_interval=60'], ['MaxJobCount', 50000]]
    assert slurm_conf_merge({'SchedulerParameters': 'bf_interval=30,bf_continue'},
                            {'SchedulerParameters': 'bf_interval=60'}) == [
        ['SchedulerParameters', 'bf_interval=60,bf_continue']]
    assert slurm_conf_merge(BASE, {}) == [[k, v] for k, v in BASE.items() if v is not None]


def test_slurm_version():
    assert slurm_version('24.11.5-4+deb13u1') == '24.11'
    assert slurm_version('22.05.8-4+deb12u3') == '22.05'
    with pytest.raises(AnsibleFilterError):
        slurm_version('unknown')


def test_filters_are_registered():
    assert {'hostlist_compress', 'hostlist_expand', 'slurm_nodes', 'slurm_partitions', 'slurm_conf_changes',
            'slurm_problems', 'slurm_version',
            'slurm_node_name', 'db_check_report', 'account_tree', 'slurm_conf_value', 'slurm_conf_merge',
            'slurm_gpus_visible', 'slurm_state_plan', 'slurm_jobs_text',
            'slurmdbd_problems', 'slurm_config_change', 'slurm_config_change_text', 'slurm_config_behind',
            'slurm_nodes_changed', 'slurm_gpu_change_problems', 'slurm_nodes_taken_out', 'slurm_nodes_service', 'slurm_users_unknown',
            'slurm_conf_digests', 'slurm_conf_cache_stale', 'slurm_first_job_id',
            'slurm_package_files', 'slurm_upgrade_problems', 'slurm_installed_packages',
            'slurm_installed_versions', 'slurm_packages_behind', 'slurm_hosts_without_facts'} == set(FilterModule().filters())


def test_the_upgrade_filters_read_each_hosts_package_facts():
    f = FilterModule().filters()
    hostvars = {
        'ctl': {'ansible_facts': {'packages': {'slurm-client': [{'version': '24.11.5-4+deb13u1'}]}},
                'slurm_facts_version_package': 'slurm-client'},
        'el9': {'ansible_facts': {'packages': {'slurm': [{'version': '24.11.5-1.el9'}]}},
                'slurm_facts_version_package': 'slurm'},
        'new': {'ansible_facts': {'packages': {}}},
    }
    installed = f['slurm_installed_versions'](['ctl', 'el9', 'new'], hostvars)
    assert installed == {'ctl': '24.11.5-4+deb13u1', 'el9': '24.11.5-1.el9', 'new': ''}
    assert f['slurm_upgrade_problems'](installed, '26.05.5-1') == []
    refused = f['slurm_upgrade_problems'](installed, '24.05.8-1')
    assert len(refused) == 1 and refused[0].startswith('Slurm 24.11.5 is installed on ctl, el9, newer than')


def test_slurm_problems_check_the_package_source():
    f = FilterModule().filters()
    settings = dict(cluster_name='c', controller_hosts=['ctl'], compute_hosts=['gpu-01'],
                    package_repository='sid', package_version='26.05.5-1', os_family='Debian')
    assert [p for p in f['slurm_problems'](settings) if 'slurm_package_repository' in p] == [
        "slurm_package_repository 'sid' is not an apt source line: give one such as "
        "'deb http://deb.debian.org/debian sid main' (or 'deb [trusted=yes] file:/srv/slurm ./' "
        "for local package files)"]
    assert f['slurm_package_files']({'repository': '', 'version': '', 'repository_packages': []}) == {}


def test_two_hosts_that_would_be_one_slurm_node_are_refused():
    hostvars = {'gpu01.rack1': node(), 'gpu01.rack2': node(), 'gpu02.rack2': node(slurm_node_name='gpu02')}
    problems = slurm_nodes(list(hostvars), hostvars)['problems']
    assert problems == ["gpu01.rack1 and gpu01.rack2 are both the Slurm node 'gpu01': "
                        "set slurm_node_name on one of them"]


@pytest.mark.parametrize('host, extra, why', [
    ('10.0.0.5', {}, "the Slurm node name '10' (the first label of the inventory name)"),
    ('gpu-01', dict(slurm_node_name='gpu 01'), "the Slurm node name 'gpu 01' (slurm_node_name)"),
    ('gpu-01', dict(slurm_node_name='gpu[01]'), "the Slurm node name 'gpu[01]' (slurm_node_name)"),
])
def test_node_names_slurm_cannot_use_are_refused(host, extra, why):
    problems = slurm_nodes([host], {host: node(**extra)})['problems']
    assert problems == ["%s: %s is not one Slurm can use: it must start with a letter and hold only letters, "
                        "digits, '-' and '_'; set slurm_node_name for the host" % (host, why)]


def test_slurmdbd_problems_are_listed_together():
    from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import slurmdbd_problems
    assert slurmdbd_problems(dict(storage_host='db', storage_pass='p;a!s@s#1', conf_extra=dict(
        PurgeJobAfter='24month', Parameters='PreserveCaseUser'))) == []
    problems = slurmdbd_problems(dict(storage_host='', storage_pass='"wrapped"', storage_client_cert='c',
                                      conf_extra=dict(DbdPort=1, CommitDelai=1, ArchiveDir='/a b"')))
    assert [p.split(':', maxsplit=1)[0] for p in problems] == [
        'slurmdbd_storage_host is empty', 'slurmdbd_storage_pass cannot be written to slurmdbd.conf so that slurmdbd '
        'reads the same password', 'slurmdbd_storage_client_cert and slurmdbd_storage_client_key go together',
        'slurmdbd_conf_extra', 'slurmdbd_conf_extra', 'slurmdbd_conf_extra']
    assert 'wrapped' not in ' '.join(problems)


def test_gpus_are_billed_as_the_cpus_that_come_with_them():
    hostvars = {'a100-4': node(slurm_node_gpus=dict(count=4, type='a100')),
                'a100-2': node(slurm_node_gpus=dict(count=2, type='a100')),
                'cpu-01': node()}
    nodes = slurm_nodes(list(hostvars), hostvars)['nodes']
    parts = slurm_partitions([dict(name='gpu', nodes='a100-[2,4]'), dict(name='cpu', nodes='cpu-01'),
                              dict(name='mine', nodes='a100-2', tres_billing_weights='CPU=1,GRES/gpu=100'),
                              dict(name='off', nodes='a100-4', tres_billing_weights='')],
                             list(hostvars), nodes)
    weights = dict((p['name'], p['tres_billing_weights']) for p in parts['partitions'])
    # 64 CPUs: 16 per GPU on the 4-GPU node, 32 on the 2-GPU one; the smaller
    assert weights == {'gpu': 'CPU=1.0,GRES/gpu=16', 'cpu': None, 'mine': 'CPU=1,GRES/gpu=100', 'off': ''}


APPLIED = dict(written=False, restart=False, node_restart=False, keys=[], files=[], behind=[])


def test_config_change_nothing_written():
    assert slurm_config_change(APPLIED, dict(changed=False, changed_files=[], changed_keys=[])) == APPLIED


def test_config_change_reconfigure_only():
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf'], restart=False,
                                               changed_keys=['MaxTime']))
    assert change == dict(written=True, restart=False, node_restart=False, keys=['MaxTime'], files=['slurm.conf'], behind=[])


def test_config_change_restart_key_restarts_both_daemons():
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf'], restart=True,
                                               changed_keys=['NodeName']))
    assert change['restart'] and change['node_restart']


def test_config_change_gres_conf_restarts_slurmd_only():
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['gres.conf'], restart=False, changed_keys=[]))
    assert change == dict(written=True, restart=False, node_restart=True, keys=[], files=['gres.conf'], behind=[])


def test_config_change_keeps_what_is_pending():
    # slurmdbd's play wrote a node line; slurmctld's play finds the files unchanged.
    pending = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf'], restart=True,
                                                changed_keys=['NodeName']))
    again = slurm_config_change(pending, dict(changed=False, changed_files=[], changed_keys=[]))
    assert again == pending
    more = slurm_config_change(pending, dict(changed=True, changed_files=['slurm.conf'], changed_keys=['NodeName', 'MaxTime']))
    assert more['keys'] == ['NodeName', 'MaxTime']
    cgroup = slurm_config_change(more, dict(changed=True, changed_files=['cgroup.conf'], changed_keys=[]))
    assert cgroup['files'] == ['slurm.conf', 'cgroup.conf']


def test_a_change_an_earlier_run_wrote_and_never_applied_takes_a_restart():
    # the files unchanged in this run, but newer than what slurmctld read
    # written after slurmctld started, and not what the daemon role noted it applied last
    behind = slurm_config_behind(['old=/var/lib/slurm/slurmctld', 'ctld_started=1796630400',
                                  'conf_written=1796630461', 'conf_applied=' + 'a' * 64, 'conf_now=' + 'b' * 64],
                                 'ctl', '/etc/slurm')
    assert behind == ['/etc/slurm on ctl written after slurmctld started (2026-12-07T08:00:00Z) and not applied since']
    # no note yet (a cluster set up before the note existed): written after the start is enough
    assert slurm_config_behind(['ctld_started=1796630400', 'conf_written=1796630461', 'conf_applied=',
                                'conf_now=' + 'b' * 64], 'ctl', '/etc/slurm') == behind
    change = slurm_config_change(APPLIED, dict(changed=False, changed_files=[], changed_keys=[]), behind)
    assert change['written'] and change['restart'] and change['node_restart']
    assert slurm_config_change_text(change) == behind[0]
    # merged once, whichever play finds it again
    assert slurm_config_change(change, dict(changed=False), behind)['behind'] == behind


GPU_NODES = [dict(name='a100-01', gpus=dict(count=4, type='a100')), dict(name='a100-02', gpus=dict(count=3, type='a100')),
             dict(name='cpu-01', gpus=None)]
GPU_READ = ['old=/srv/slurm-state/slurmctld', 'node_gres=a100-01 gpu:a100:4(S:0)', 'node_gres=a100-02 gpu:a100:2(S:0)',
            'node_gres=cpu-01 (null)', 'gpu_job=41 a100-02', 'gpu_job=43 a100-[01-02]']


def test_a_gpu_change_under_a_running_gpu_job_is_refused_by_name():
    # Slurm kills job 41 and 43 when slurmctld restarts with a100-02's new count
    assert slurm_gpu_change_problems(GPU_READ, GPU_NODES) == [
        'a100-02: its GPUs change (a100:2 -> a100:3) while job(s) 41, 43 use GPUs there: when slurmctld restarts on '
        "the new line, Slurm kills a running job whose node's GPU count or type changed. Drain the node and let its "
        'jobs end first (playbooks/drain.yml --limit a100-02), then run again']
    # a type change too
    h100 = [dict(name='a100-01', gpus=dict(count=4, type='h100'))]
    assert slurm_gpu_change_problems(GPU_READ, h100)[0].startswith('a100-01: its GPUs change (a100:4 -> h100:4)')


def test_a_gpu_change_on_a_node_without_gpu_jobs_goes_ahead():
    drained = [line for line in GPU_READ if not line.startswith('gpu_job=')] + ['gpu_job=44 a100-01']
    assert slurm_gpu_change_problems(drained, GPU_NODES) == []
    # unchanged nodes with jobs; a node slurmctld does not know yet; slurmctld not answering
    same = [dict(name='a100-[01-02]', gpus=dict(count=2, type='a100'))]
    assert slurm_gpu_change_problems(['node_gres=a100-02 gpu:a100:2(S:0-1)', 'gpu_job=41 a100-02'], same) == []
    assert slurm_gpu_change_problems(['gpu_job=41 a100-09'], [dict(name='a100-09', gpus=dict(count=1, type=''))]) == []
    assert slurm_gpu_change_problems([], GPU_NODES) == []


def test_the_nodes_a_person_took_out_before_the_run():
    lines = ['node_out=a100-01 root add a GPU', 'node_out=a100-02 slurm gres/gpu count reported lower than configured (2 < 3)',
             'node_out=cpu-01 slurm Kill task failed', 'node_out=gpu-07 alice GPU ECC', 'node_gres=a100-01 gpu:a100:4']
    assert slurm_nodes_taken_out(lines, 'slurm') == ['a100-01', 'cpu-01', 'gpu-07']
    assert slurm_nodes_taken_out([], 'slurm') == []


def test_the_nodes_whose_line_changed():
    keys = ['nodename', 'partitionname', 'a100-02 Gres gpu:a100:2 -> gpu:a100:3', 'cpu-02 added',
            'gpu-07 removed', 'gpu-01 RealMemory 8192 -> 7168', 'a100-02 RealMemory (none) -> 4096']
    assert slurm_nodes_changed(keys) == ['a100-02', 'gpu-01']
    assert slurm_nodes_changed([]) == [] and slurm_nodes_changed(None) == []


def test_slurmctld_that_read_its_files_after_they_were_written_is_not_behind():
    assert slurm_config_behind(['ctld_started=1796630461', 'conf_written=1796630461'], 'ctl', '/etc/slurm') == []
    assert slurm_config_behind(['ctld_started=1796630500', 'conf_written=1796630461'], 'ctl', '/etc/slurm') == []
    # Slurm 22.05: a reconfigure reads the files in the same process; the daemon role noted what it applied
    assert slurm_config_behind(['ctld_started=1796630400', 'conf_written=1796630461', 'conf_applied=' + 'a' * 64,
                                'conf_now=' + 'a' * 64], 'ctl', '/etc/slurm') == []
    # slurmctld not running (its start reads the files), no files yet
    assert slurm_config_behind(['conf_written=1796630461'], 'ctl', '/etc/slurm') == []
    assert slurm_config_behind(['conf_loaded=1796630461', 'conf_written='], 'ctl', '/etc/slurm') == []
    assert slurm_config_behind([], 'ctl', '/etc/slurm') == []


NAMES = ['slurm.conf', 'gres.conf', 'cgroup.conf']
SHA_A, SHA_B = 'a' * 64, 'b' * 64


def test_conf_digests_from_site_facts_or_from_a_read():
    facts = {'file_states': {'patterns': ['/etc/slurm/*', '/var/lib/slurm/slurmd/conf-cache/*'],
                             'paths': {'/etc/slurm/slurm.conf': {'state': 'file', 'sha256': SHA_A},
                                       '/etc/slurm/gres.conf': {'state': 'file', 'sha256': SHA_B},
                                       '/etc/slurm/prolog.d': {'state': 'directory'}}}}
    assert slurm_conf_digests(facts, '/etc/slurm/', NAMES) == {'slurm.conf': SHA_A, 'gres.conf': SHA_B}
    # an empty cache folder, as the facts show it: nothing cached
    assert slurm_conf_digests(facts, '/var/lib/slurm/slurmd/conf-cache', NAMES) == {}
    # facts whose patterns do not cover the folder, or none: the read, else unknown
    assert slurm_conf_digests(facts, '/var/lib/other', NAMES) is None
    read = ['%s  /var/lib/slurm/slurmd/conf-cache/slurm.conf' % SHA_A, '%s  gres.conf' % SHA_B,
            'sha256sum: cgroup.conf: No such file or directory', '%s  topology.conf' % SHA_A]
    assert slurm_conf_digests({}, '/var/lib/slurm/slurmd/conf-cache', NAMES, read) == {
        'slurm.conf': SHA_A, 'gres.conf': SHA_B}
    assert slurm_conf_digests(None, '/etc/slurm', NAMES) is None


def test_a_configless_slurmd_whose_cache_differs_from_the_controller_is_named():
    assert slurm_conf_cache_stale({'slurm.conf': SHA_A, 'gres.conf': SHA_A}, {'slurm.conf': SHA_A, 'gres.conf': SHA_B}) == [
        "gres.conf (slurmd's cached copy differs from the controller's)"]
    # a file slurmd never fetched
    assert slurm_conf_cache_stale({}, {'slurm.conf': SHA_A}) == [
        "slurm.conf (slurmd's cached copy differs from the controller's)"]
    # in step; or one side unknown; a file the controller lacks is its own run's
    assert slurm_conf_cache_stale({'slurm.conf': SHA_A}, {'slurm.conf': SHA_A}) == []
    assert slurm_conf_cache_stale(None, {'slurm.conf': SHA_A}) == []
    assert slurm_conf_cache_stale({'slurm.conf': SHA_A}, None) == []
    assert slurm_conf_cache_stale({'slurm.conf': SHA_A, 'gres.conf': SHA_B}, {'slurm.conf': SHA_A}) == []


def test_config_change_text_names_keys_and_files():
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf', 'gres.conf'],
                                               restart=False, changed_keys=['maxtime', 'partitionname']))
    assert slurm_config_change_text(change) == 'slurm.conf: maxtime, partitionname; gres.conf'


def test_config_change_text_of_a_new_slurm_conf():
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf', 'gres.conf', 'cgroup.conf'],
                                               restart=True, changed_keys=[]))
    assert slurm_config_change_text(change) == 'slurm.conf: new; gres.conf; cgroup.conf'


def test_config_change_text_of_a_mode_only_change():
    # The content is the same, its mode (or owner, or a comment) is not: no key to name.
    change = slurm_config_change(APPLIED, dict(changed=True, changed_files=['slurm.conf'], restart=False, changed_keys=[]))
    assert slurm_config_change_text(change) == 'slurm.conf: no value (owner, group, mode or comments)'
    assert slurm_config_change_text(slurm_config_change(
        APPLIED, dict(changed=True, changed_files=['gres.conf'], changed_keys=[]))) == 'gres.conf'


def test_config_change_of_a_skipped_write():
    assert slurm_config_change(APPLIED, dict(skipped=True)) == APPLIED


GOOD = dict(cluster_name='prod-a100', controller_hosts=['ctl', 'ctl2'], compute_hosts=['a100-01'],
            state_save_location='/srv/slurm-state', conf_extra={'SlurmctldTimeout': 10},
            gpu_job_map_dir='/run/gpuhpc/gpu-jobs')


def test_slurm_problems_none_for_a_good_cluster():
    assert slurm_problems(GOOD) == []
    assert slurm_problems(dict(GOOD, controller_hosts=['ctl'], state_save_location='', gpu_job_map_dir='')) == []


def test_a_backup_slurmdbd_needs_a_second_controller():
    assert slurm_problems(dict(GOOD, dbd_backup=True)) == []
    assert slurm_problems(dict(GOOD, controller_hosts=['ctl'], state_save_location='', dbd_backup=True)) == [
        'slurm_dbd_backup is true but slurm_controller has 1 host(s): a backup slurmdbd runs on the second '
        'controller; add one, or set slurm_dbd_backup to false']
    # the backup's address is the collection's: refused in the extra keys, by the variable that sets it
    assert slurm_problems(dict(GOOD, conf_extra={'AccountingStorageBackupHost': 'db2'})) == [
        "slurm_conf_extra: 'AccountingStorageBackupHost' is written by the collection; set it with slurm_dbd_backup"]


def test_slurm_problems_lists_each_one():
    problems = slurm_problems(dict(cluster_name='Prod A100', controller_hosts=['ctl', 'ctl2'], compute_hosts=[],
                                   state_save_location='', conf_extra={'Foo': 1},
                                   gpu_job_map_dir='run/map'))
    assert len(problems) == 5
    assert problems[0].startswith("slurm_cluster_name 'Prod A100' is not a name Slurm accepts")
    assert problems[1] == 'slurm_compute_hosts is empty: put at least one host in the slurm_compute group'
    assert problems[2].startswith('slurm_controller has 2 hosts (ctl, ctl2): set slurm_state_save_location')
    assert problems[3].startswith("slurm_conf_extra: 'Foo' is not a slurm.conf option")
    assert problems[4].startswith("slurm_gpu_job_map_dir 'run/map' is not an absolute path")


def test_slurm_problems_relative_state_folder():
    assert slurm_problems(dict(GOOD, state_save_location='srv/state')) == [
        "slurm_state_save_location 'srv/state' is not an absolute path"]


DB_4127 = {'schema': {'last_job_id': 4127}}


def test_first_job_id_after_the_history_when_the_state_is_lost():
    assert slurm_first_job_id(['none', ''], DB_4127) == 4128


def test_first_job_id_is_kept_while_slurmctld_has_state():
    # the next run: slurmctld saved state, the database has gone on
    assert slurm_first_job_id(['saved', '4128'], {'schema': {'last_job_id': 5000}}) == 4128


def test_first_job_id_is_computed_again_after_a_later_loss_of_state():
    # written once, then the state lost again: the database knows more (a kept 4128 was stale)
    assert slurm_first_job_id(['none', '4128'], {'schema': {'last_job_id': 5000}}) == 5001
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 5000}}) == 5001


def test_first_job_id_respects_max_job_id():
    # ids wrap at MaxJobId: above it every daemon refuses slurm.conf, equal to it no job can be submitted
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 67043327}}) == 0
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 67043326}}) == 67043327
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 999}}, {'MaxJobId': 1000}) == 0
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 998}}, {'maxjobid': '1000'}) == 999
    # after a wrap the newest job has a low id (slurmdbd_db_check reads the newest, not the highest)
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 12}}, {'MaxJobId': 1000}) == 13


def test_first_job_id_none_on_a_running_or_new_cluster():
    assert slurm_first_job_id(['saved'], DB_4127) == 0
    assert slurm_first_job_id(['none'], {'schema': {'last_job_id': 0}}) == 0
    assert slurm_first_job_id(['none'], {}) == 0
    assert slurm_first_job_id([], None) == 0


LOCAL = '/var/lib/slurm/slurmctld'
SHARED = '/srv/slurm-state/slurmctld'
DB_RUNNING = {'schema': {'last_job_id': 40, 'unfinished_jobs': 4}}


def read(old=LOCAL, old_saved=True, new_saved=False, mount='/', marker=False):
    return ['old=%s' % old] + (['old_saved=yes'] if old_saved else []) + (['new_saved=yes'] if new_saved else []) \
        + (['marker=yes'] if marker else []) + ['mount=%s' % mount]


def test_a_new_state_folder_gets_the_state_of_the_current_one():
    # the HA recipe on a live cluster: slurmctld restarted on an empty folder, and all 4 jobs ended CANCELLED
    plan = slurm_state_plan({'ctl': read(mount='/srv/slurm-state')},
                            dict(new=SHARED, shared=True, db=DB_RUNNING, empty_ok=False))
    assert plan == {'action': 'migrate', 'from': LOCAL, 'problems': []}


def test_a_backup_controller_added_gets_the_state_through_the_shared_folder():
    # README's recipe on a live cluster: ctl2 joins with no slurm.conf and an
    # empty (shared) folder while ctl's state moves there (found in the lab)
    reads = {'ctl': read(mount='/srv/slurm-state'), 'ctl2': read(old='', old_saved=False, mount='/srv/slurm-state')}
    plan = slurm_state_plan(reads, dict(new=SHARED, shared=True, db=DB_RUNNING, empty_ok=False))
    assert plan == {'action': 'migrate', 'from': LOCAL, 'problems': []}
    # the shared folder not mounted on the new one is still refused
    reads['ctl2'] = read(old='', old_saved=False)
    plan = slurm_state_plan(reads, dict(new=SHARED, shared=True, db=DB_RUNNING, marker='.gpuhpc-state'))
    assert plan['action'] == 'migrate' and plan['problems'][0].startswith(
        'ctl2: slurm_state_save_location /srv/slurm-state/slurmctld is on the root file system')


def test_both_folders_with_state_is_refused():
    plan = slurm_state_plan({'ctl': read(new_saved=True, mount='/srv/slurm-state')},
                            dict(new=SHARED, shared=True, db=DB_RUNNING))
    assert plan['action'] == 'none' and plan['problems'][0].startswith(
        'ctl: both the current state folder /var/lib/slurm/slurmctld and slurm_state_save_location')


def test_an_unmounted_shared_folder_is_refused_by_name():
    # a rebuilt primary whose NFS mount is missing: a local, empty folder at the same path
    reads = {'ctl': read(old=SHARED, old_saved=False),
             'ctl2': read(old=SHARED, new_saved=True, mount='/srv/slurm-state')}
    plan = slurm_state_plan(reads, dict(new=SHARED, shared=True, db=DB_RUNNING, marker='.gpuhpc-state'))
    assert plan['action'] == 'none'
    assert plan['problems'] == [
        'ctl: slurm_state_save_location /srv/slurm-state/slurmctld is on the root file system and holds no '
        '.gpuhpc-state: it is not the shared folder (is its mount missing?). Mount the shared folder there, or, if '
        'it is shared another way, create /srv/slurm-state/slurmctld/.gpuhpc-state']
    marked = slurm_state_plan({'ctl': read(old=SHARED, new_saved=True, old_saved=True, marker=True)},
                              dict(new=SHARED, shared=True, db=DB_RUNNING))
    assert marked == {'action': 'none', 'from': '', 'problems': []}


def test_an_empty_folder_while_the_database_has_jobs_not_ended_is_refused_unless_allowed():
    settings = dict(new=LOCAL, shared=False, db=DB_RUNNING)
    plan = slurm_state_plan({'ctl': read(old='', old_saved=False)}, settings)
    assert plan['problems'] == [
        'ctl: slurmctld would start on /var/lib/slurm/slurmctld, which holds no saved state (job_state), while the '
        'accounting database has 4 job(s) of the cluster not ended: every running job would be killed and the queue '
        'lost. Mount or restore the state folder; if the state is lost for good, set slurm_state_empty_ok=true '
        '(then close the lost jobs\' records: sacctmgr show runawayjobs)']
    assert slurm_state_plan({'ctl': read(old='', old_saved=False)}, dict(settings, empty_ok=True))['problems'] == []


def test_nothing_to_do_on_a_new_cluster_or_a_steady_one():
    fresh = dict(new=LOCAL, shared=False, db={'schema': {'last_job_id': None, 'unfinished_jobs': None}})
    assert slurm_state_plan({'ctl': read(old='', old_saved=False)}, fresh)['problems'] == []
    steady = slurm_state_plan({'ctl': read(old=LOCAL, new_saved=True)}, dict(new=LOCAL, db=DB_RUNNING))
    assert steady == {'action': 'none', 'from': '', 'problems': []}
    assert slurm_state_plan({}, dict(new=LOCAL, db=DB_RUNNING))['problems'] == []


def test_jobs_text_from_the_first_controllers_read():
    from ansible_collections.gpuhpc.slurm.plugins.filter.slurm import slurm_jobs_text
    reads = {'ctl': ['jobs_running=4', 'jobs_pending=12'] + read(), 'ctl2': ['jobs_running=0', 'jobs_pending=0']}
    assert slurm_jobs_text(reads) == '4 running and 12 pending job(s)'
    assert slurm_jobs_text({'ctl': read()}) == ''  # slurmctld did not answer: no number
    assert slurm_jobs_text({}) == ''


def test_a_play_without_controllers_reads_nothing_and_plans_nothing():
    # the slurmd play: the read is skipped (an empty read per controller); the plan refused every GPU node
    skipped = {'ctl': [], 'ctl2': []}
    assert slurm_state_plan(skipped, dict(new=SHARED, shared=True, db=DB_RUNNING)) == {
        'action': 'none', 'from': '', 'problems': []}
    assert slurm_state_plan(skipped, dict(new=LOCAL, shared=False, db=DB_RUNNING))['problems'] == []


def test_first_job_id_is_kept_when_the_state_moves_into_an_empty_folder():
    # the new folder holds no job_state yet, but the run copies the state there first
    assert slurm_first_job_id(['none'], DB_4127, None, True) == 0
    assert slurm_first_job_id(['none', '300'], DB_4127, None, True) == 300


def test_slurm_nodes_service():
    # sinfo -h -N -o '%N %T %u %E' on Slurm 22.05: a node once per partition
    lines = [
        'a100-01 mixed Unknown none',
        'a100-01 mixed Unknown none',
        'a100-02 drained root add a GPU',
        'a100-03 drained slurm gres/gpu count reported lower than configured (2 < 3)',
        'cpu-01 idle* slurm Not responding',
        'cpu-02 down* Unknown none',
        'gpu-07 draining alice GPU ECC',
        'gpu-08 completing Unknown none',
        'gpu-09 drained Unk(64030) Kill task failed',
    ]
    got = slurm_nodes_service(lines)
    assert got['states'] == {'a100-01': 'mixed', 'a100-02': 'drained', 'a100-03': 'drained', 'cpu-01': 'idle*',
                             'cpu-02': 'down*', 'gpu-07': 'draining', 'gpu-08': 'completing',
                             'gpu-09': 'drained'}
    assert got['out'] == ['a100-03', 'cpu-01', 'cpu-02', 'gpu-09']
    assert got['by_person'] == {'a100-02': 'root: add a GPU', 'gpu-07': 'alice: GPU ECC'}
    assert slurm_nodes_service([]) == dict(states={}, out=[], by_person={})
    # another SlurmUser: its reasons are slurmctld's
    assert slurm_nodes_service(['n1 drained slurmsvc Kill task failed'], 'slurmsvc')['out'] == ['n1']


def test_slurm_users_unknown_names_the_controller_and_the_users():
    results = [
        {'item': 'ctl', 'rc': 0, 'stdout_lines': ['Kenji.Sato:x:2101:2101::/home/Kenji.Sato:/bin/bash',
                                                  'Ana-Lima:x:2102:2102::/home/Ana-Lima:/bin/bash']},
        # getent passwd exits 2 when a key is not found, and prints the others
        {'item': 'ctl2', 'rc': 2, 'stdout_lines': ['Ana-Lima:x:2102:2102::/home/Ana-Lima:/bin/bash']},
        {'item': 'ctl3', 'unreachable': True},
        {'item': 'ctl4', 'skipped': True},
    ]
    assert slurm_users_unknown(results, ['Kenji.Sato', 'Ana-Lima']) == {'ctl2': ['Kenji.Sato']}
    assert slurm_users_unknown([], ['x']) == {}
