from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import slurm_conf
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
    result = changes(OLD, OLD.replace('gpu-[01-02] CPUs', 'gpu-[01-03] CPUs'))
    assert result['restart'] is True and result['keys'] == ['nodename', 'gpu-03 added']


def test_a_nodes_hardware_change_is_named_node_by_node():
    # a lost DIMM on gpu-02: the restart it takes says which node and what, not just "nodename"
    old = 'NodeName=gpu-[01-02] CPUs=2 RealMemory=8192 Gres=gpu:2 State=UNKNOWN\n'
    new = ('NodeName=gpu-01 CPUs=2 RealMemory=8192 Gres=gpu:2 State=UNKNOWN\n'
           'NodeName=gpu-02 CPUs=2 RealMemory=7168 Gres=gpu:1 State=UNKNOWN\n'
           'NodeName=gpu-04 CPUs=4 RealMemory=8192 State=UNKNOWN\n')
    result = changes(old, new)
    assert result['restart'] is True
    assert result['keys'] == ['nodename', 'gpu-02 Gres gpu:2 -> gpu:1', 'gpu-02 RealMemory 8192 -> 7168',
                              'gpu-04 added']


def test_a_first_write_is_a_restart():
    assert changes('', OLD)['restart'] is True


def read_conf_value(line):
    """The value of one ``Key=value`` line as Slurm's parser (src/common/parse_config.c,
    the same in 22.05 and 24.11) reads it: _strip_comments, _strip_escapes, then
    keyvalue_pattern."""
    out, count = [], 0
    for c in line:  # a '#' after an even number of backslashes starts a comment
        if c == '#' and count % 2 == 0:
            break
        count = count + 1 if c == '\\' else 0
        out.append(c)
    plain, skip = [], False
    for c in out:  # a backslash keeps the character after it
        if skip or c != '\\':
            plain.append(c)
            skip = False
        else:
            skip = True
    m = re.match(r'^\s*[A-Za-z0-9_.]+\s*[-*+/]?=\s*(("([^"]*)")|(\S+))(\s|$)', ''.join(plain))
    return m.group(3) if m.group(3) is not None else m.group(4)


@pytest.mark.parametrize('value', [
    'simple', 'p;a!s@s#1', 'back\\slash', 'end\\', '\\#', 'with space', 'tab\there', '"lead', 'a"b',
    "'single'", '""x""', 'x=y', 'Ünïcode', '#',
])
def test_conf_value_reads_back_the_same(value):
    assert read_conf_value('StoragePass=' + slurm_conf.conf_value(value)) == value


@pytest.mark.parametrize('value, why', [
    ('say "hi" now', 'both a blank and a double quote'),
    ('"wrapped"', 'starts and ends with a double quote'),
    ('two\nlines', 'line break'),
])
def test_conf_value_refuses_what_no_line_can_carry(value, why):
    with pytest.raises(ValueError, match=why):
        slurm_conf.conf_value(value)


@pytest.mark.parametrize('key', ['AccountingStorageEnforce', 'MaxJobCount', 'MaxNodeCount', 'CoreSpecPlugin',
                                 'PowerPlugin'])
def test_keys_that_take_a_restart_before_23_11_only(key):
    """slurm.conf(5) of 22.05 and 23.02: 'A restart of slurmctld is required'; from 23.11
    scontrol reconfigure starts slurmctld afresh."""
    new = OLD + '%s=1\n' % key
    assert changes(OLD, new, '22.05')['restart'] is True
    assert changes(OLD, new, '23.02')['restart'] is True
    assert changes(OLD, new)['restart'] is True
    assert changes(OLD, new, '24.11')['restart'] is False


@pytest.mark.parametrize('version', ['22.05', '24.11', '25.05'])
@pytest.mark.parametrize('key', ['AuthType', 'CredType', 'SchedulerType', 'SelectTypeParameters', 'SwitchType',
                                 'BurstBufferType', 'JobContainerType'])
def test_keys_reconfigure_never_applies(key, version):
    """read_config.c keeps their old value on a reconfigure in every release."""
    assert changes(OLD, OLD + '%s=x\n' % key, version)['restart'] is True
