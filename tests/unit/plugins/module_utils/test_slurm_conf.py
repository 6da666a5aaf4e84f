from ansible_collections.gpuhpc.slurm.plugins.module_utils.slurm_conf import changes, parse, unknown_keys

OLD = """# managed
ClusterName=gpulab
SchedulerType=sched/backfill
SelectType=select/cons_tres
NodeName=gpu-[01-02] CPUs=2 Gres=gpu:2
PartitionName=gpu Nodes=gpu-[01-02] Default=YES
"""


def test_unknown_keys_are_case_insensitive_and_keep_order():
    assert unknown_keys(['SchedulerParameters', 'schedulertype', 'SchedulerParameter', 'Foo']) == \
        ['SchedulerParameter', 'Foo']


def test_parse_ignores_comments_and_keeps_lines():
    scalars, lines = parse(OLD + 'MaxJobCount=1000 # big\n')
    assert scalars['clustername'] == 'gpulab'
    assert scalars['maxjobcount'] == '1000'
    assert lines['nodename'] == ['NodeName=gpu-[01-02] CPUs=2 Gres=gpu:2']


def test_no_change():
    assert changes(OLD, OLD) == dict(changed=False, keys=[], restart=False)


def test_a_scheduler_change_is_a_reconfigure():
    result = changes(OLD, OLD + 'SchedulerParameters=bf_continue\n')
    assert result == dict(changed=True, keys=['schedulerparameters'], restart=False)


def test_partition_change_is_a_reconfigure():
    result = changes(OLD, OLD.replace('Default=YES', 'Default=YES MaxTime=1-0'))
    assert result['restart'] is False and result['keys'] == ['partitionname']


def test_a_select_type_change_needs_a_restart():
    assert changes(OLD, OLD.replace('cons_tres', 'linear'))['restart'] is True


def test_a_new_node_needs_a_restart():
    assert changes(OLD, OLD.replace('gpu-[01-02] CPUs', 'gpu-[01-03] CPUs'))['restart'] is True


def test_a_first_write_is_a_restart():
    assert changes('', OLD)['restart'] is True
