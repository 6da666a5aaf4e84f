from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuhpc.slurm.plugins.modules import slurm_config

CONF = 'ClusterName=lab\nSlurmctldHost=ctl\nSchedulerParameters=bf_continue\nNodeName=gpu-01 CPUs=2\n'


def args(root, conf=CONF, gres='Name=gpu File=/dev/nvidia0\n'):
    return dict(dir=str(root / 'slurm'), files={'slurm.conf': conf, 'gres.conf': gres, 'cgroup.conf': 'x\n'})


def test_a_new_configuration_takes_a_restart_then_a_rerun_nothing(run_module, tmp_path):
    result = run_module(slurm_config.main, args(tmp_path))
    assert result['changed_files'] == ['cgroup.conf', 'gres.conf', 'slurm.conf']
    assert result['restart'] is True
    assert (tmp_path / 'slurm' / 'slurm.conf').read_text() == CONF
    again = run_module(slurm_config.main, args(tmp_path))
    assert again['changed'] is False and again['changed_files'] == [] and again['restart'] is False


def test_a_reconfigure_key_does_not_take_a_restart(run_module, tmp_path):
    run_module(slurm_config.main, args(tmp_path))
    result = run_module(slurm_config.main, args(tmp_path, CONF.replace('bf_continue', 'bf_continue,bf_max_job_test=500')))
    assert result['changed_files'] == ['slurm.conf']
    assert result['changed_keys'] == ['schedulerparameters']
    assert result['restart'] is False


def test_a_node_line_change_takes_a_restart(run_module, tmp_path):
    run_module(slurm_config.main, args(tmp_path))
    result = run_module(slurm_config.main, args(tmp_path, CONF.replace('CPUs=2', 'CPUs=4')))
    assert result['changed_keys'] == ['nodename', 'gpu-01 CPUs 2 -> 4'] and result['restart'] is True


def test_gres_conf_alone(run_module, tmp_path):
    run_module(slurm_config.main, args(tmp_path))
    result = run_module(slurm_config.main, args(tmp_path, gres='Name=gpu File=/dev/nvidia[0-1]\n'))
    assert result['changed_files'] == ['gres.conf'] and result['restart'] is False and result['changed_keys'] == []


def test_check_mode_reports_and_writes_nothing(run_module, tmp_path):
    run_module(slurm_config.main, args(tmp_path))
    result = run_module(slurm_config.main, args(tmp_path, CONF.replace('CPUs=2', 'CPUs=4')), check_mode=True)
    assert result['changed_files'] == ['slurm.conf'] and result['restart'] is True
    assert (tmp_path / 'slurm' / 'slurm.conf').read_text() == CONF


def test_configless_node_keeps_no_copy(run_module, tmp_path):
    run_module(slurm_config.main, args(tmp_path))
    result = run_module(slurm_config.main, dict(dir=str(tmp_path / 'slurm'),
                                                files={'slurm.conf': None, 'gres.conf': None, 'cgroup.conf': None}))
    assert sorted(result['changed_files']) == ['cgroup.conf', 'gres.conf', 'slurm.conf']
    assert os.listdir(str(tmp_path / 'slurm')) == []
