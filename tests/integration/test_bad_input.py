"""Bad input stops the Slurm roles before anything is written, with a message
that names the variable and the fix. The roles' preflight tasks run against
local hosts; nothing is installed."""

import pytest

from local_play import inventory, play

NODE = dict(slurm_node_cpus=4, slurm_node_sockets=1, slurm_node_cores_per_socket=4,
            slurm_node_threads_per_core=1, slurm_node_real_memory=8000)


def run(tmp_path, playbook, group_vars=None, node_vars=None, check=False):
    """Run playbook against a local controller 'ctl' and GPU node 'gpu-01';
    group_vars for all hosts, node_vars for gpu-01 (default: 2 GPUs). Returns
    rc and the output on one line."""
    hosts = inventory(dict(slurm_controller=dict(ctl=None),
                           slurm_compute={'gpu-01': dict(NODE, **(node_vars or dict(slurm_node_gpus=dict(count=2))))}),
                      group_vars)
    return play(tmp_path, playbook, hosts, check=check)[:2]


SLURM_PREFLIGHT = '''
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.slurm
        tasks_from: preflight
'''


def test_good_input_passes(tmp_path):
    rc, out = run(tmp_path, SLURM_PREFLIGHT)
    assert rc == 0, out


@pytest.mark.parametrize('group_vars, node_vars, message', [
    ({}, dict(slurm_node_gpus=dict(files='/dev/nvidia[0-1]')),
     'gpu-01: slurm_node_gpus has no count: give count (the number of GPUs), e.g. {count: 2}'),
    ({}, dict(slurm_node_gpus=dict(count=2, files='/dev/nvidia[0-3]')),
     'gpu-01: slurm_node_gpus.files /dev/nvidia[0-3] names 4 device(s) but count is 2: make them agree'),
    (dict(slurm_partitions=[dict(name='big', nodes='gpu-[01-02]')]), None,
     "partition 'big' names node 'gpu-02', which is not a compute node: "
     "add it to the slurm_compute group or remove it from the partition"),
    (dict(slurm_cluster_name='My-Cluster'), None,
     "slurm_cluster_name 'My-Cluster' is not a name Slurm accepts: use 1 to 40 lowercase letters, digits, "
     "'-' or '_', starting with a letter or digit (it names tables in the accounting database, "
     "and Slurm lower-cases it)"),
    (dict(slurm_conf_extra=dict(SchedulerParamaters='bf_continue')), None,
     "slurm_conf_extra: 'SchedulerParamaters' is not a slurm.conf option (see man slurm.conf); check its spelling"),
    (dict(slurm_conf_extra=dict(StateSaveLocation='/srv/state')), None,
     "slurm_conf_extra: 'StateSaveLocation' is written by the collection; set it with slurm_state_save_location"),
    (dict(slurm_controller_hosts=['ctl', 'gpu-01']), None,
     "slurm_controller has 2 hosts (ctl, gpu-01): set slurm_state_save_location to a folder they all share (NFS), "
     "or a backup that takes over starts from an empty state"),
    (dict(slurm_state_save_location='srv/state'), None,
     "slurm_state_save_location 'srv/state' is not an absolute path"),
    ({}, dict(slurm_node_gpus=dict(count=2), slurm_node_name='10.0.0.5'),
     "gpu-01: the Slurm node name '10.0.0.5' (slurm_node_name) is not one Slurm can use"),
    (dict(slurm_gpu_job_map_dir='run/gpu-jobs'), None,
     "slurm_gpu_job_map_dir 'run/gpu-jobs' is not an absolute path: give one (e.g. /run/gpuhpc/gpu-jobs), "
     "or an empty string for no GPU job map"),
])
def test_slurm_preflight_names_the_problem(tmp_path, group_vars, node_vars, message):
    rc, out = run(tmp_path, SLURM_PREFLIGHT, group_vars, node_vars)
    assert rc != 0
    assert message in out, out


SLURMDBD_PREFLIGHT = '''
    - hosts: ctl
      gather_facts: false
      tasks:
        - ansible.builtin.include_role:
            name: gpuhpc.slurm.slurmdbd
            tasks_from: preflight
    '''


def test_a_password_with_punctuation_is_accepted(tmp_path):
    rc, out = run(tmp_path, SLURMDBD_PREFLIGHT, dict(slurmdbd_storage_host='db.example',
                                                     slurmdbd_storage_pass='p;a!s@s#1\\x y\'z'))
    assert rc == 0, out


def test_what_slurmdbd_would_read_differently_is_refused(tmp_path):
    rc, out = run(tmp_path, SLURMDBD_PREFLIGHT, dict(
        slurmdbd_storage_host='db.example', slurmdbd_storage_pass='say "hi" now',
        slurmdbd_conf_extra=dict(PurgeJobAfter='12month', StoragePass='x', PurgeJobAftr='1')))
    assert rc != 0
    assert 'say' not in out, out
    assert ('slurmdbd_storage_pass cannot be written to slurmdbd.conf so that slurmdbd reads the same '
            'password: it holds both a blank and a double quote') in out, out
    assert "slurmdbd_conf_extra: 'StoragePass' is written by the role; set it with slurmdbd_storage_pass" in out, out
    assert "slurmdbd_conf_extra: 'PurgeJobAftr' is not a slurmdbd.conf option" in out, out


def test_an_unreachable_database_fails_with_the_check_message(tmp_path):
    rc, out = run(tmp_path, '''
        - hosts: ctl
          gather_facts: false
          tasks:
            - gpuhpc.slurm.slurmdbd_db_check:
                login_host: 127.0.0.1
                login_port: 1
                login_user: slurm
                login_password: secret-pass
                connect_timeout: 2
        ''')
    assert rc != 0
    assert 'nothing accepts connections on 127.0.0.1:1: check login_port' in out, out
    assert 'secret-pass' not in out


SLURM_EXPORTER_PREFLIGHT = '''
- hosts: ctl
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.slurm_exporter
        tasks_from: preflight
'''


RELEASE = dict(slurm_exporter_install='release', slurm_exporter_release_url='https://mirror.example/e.tar.gz',
               slurm_exporter_release_sha256='a' * 64, slurm_exporter_release_binary='e/slurm_exporter',
               slurm_exporter_release_args=['--web.listen-address=:9341', '--slurm.collect-diags'])
RELEASE_NO_SHA = ("slurm_exporter_install is release: set slurm_exporter_release_sha256 (the release archive's "
                  "SHA-256, 64 hex digits; now '')")


@pytest.mark.parametrize('group_vars, message', [
    (dict(slurm_exporter_listen_address='9341'),
     "slurm_exporter_listen_address '9341' is not ADDRESS:PORT (e.g. 0.0.0.0:9341 or [::]:9341)"),
    ({k: v for k, v in RELEASE.items() if k != 'slurm_exporter_release_sha256'}, RELEASE_NO_SHA),
    (dict(slurm_exporter_install='gpu'), "slurm_exporter_install 'gpu' is not collection or release"),
])
def test_slurm_exporter_preflight_names_the_problem(tmp_path, group_vars, message):
    rc, out = run(tmp_path, SLURM_EXPORTER_PREFLIGHT, group_vars)
    assert rc != 0
    assert message in out, out


def test_slurm_exporter_preflight_passes_good_input(tmp_path):
    rc, out = run(tmp_path, SLURM_EXPORTER_PREFLIGHT, RELEASE)
    assert rc == 0, out


def test_every_role_s_problems_are_listed_at_once(tmp_path):
    """site.yml's preflight (playbooks/preflight_roles.yml): a problem of munge, of
    the slurm role, of slurmdbd and of node_exporter, all in one failure, before
    any host changes (munge used to be installed and started before a bad
    cluster name was reported)."""
    rc, out = run(tmp_path, '- ansible.builtin.import_playbook: gpuhpc.slurm.preflight_roles\n',
                  dict(munge_num_threads=0, slurm_cluster_name='Bad Name', slurmdbd_storage_host='db.example',
                       slurmdbd_storage_pass='x', slurmdbd_conf_extra=dict(Bogus=1),
                       node_exporter_listen_address='nope', dcgm_exporter_install='git'))
    assert rc != 0
    assert '5 problem(s) in the inventory, nothing was changed: ' in out, out
    for message in ('munge: munge_num_threads is 0: give at least 1',
                    "slurm: Slurm configuration problems: slurm_cluster_name 'Bad Name' is not a name Slurm accepts",
                    "slurmdbd: slurmdbd_conf_extra: 'Bogus' is not a slurmdbd.conf option",
                    "node_exporter: node_exporter_listen_address 'nope' is not ADDRESS:PORT",
                    'dcgm_exporter: Validation of arguments failed',
                    'value of dcgm_exporter_install must be one of: package, files, got: git'):
        assert message in out, message
    assert 'changed=1' not in out
