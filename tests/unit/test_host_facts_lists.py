"""site.yml keeps only the collection's packages and services in the host facts
(playbooks/vars/host_facts.yml): every package and service a role names must be kept,
or that role's install or start task would run on every rerun."""
import glob
import os
import re

import yaml
from ansible_collections.gpuhpc.slurm.plugins.module_utils.installed import matching

ROOT = os.path.join(os.path.dirname(__file__), '..', '..')
LISTS = yaml.safe_load(open(os.path.join(ROOT, 'playbooks', 'vars', 'host_facts.yml')))


def named_in_role_vars(suffixes, jinja=True):
    """The literal names of the roles' vars (vars/*.yml) whose variable ends with one of `suffixes`,
    and, with `jinja`, the quoted names in a template (['a'] + (['b'] if ... else []))."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'vars', '*.yml')):
        for key, value in (yaml.safe_load(open(path)) or {}).items():
            if not key.endswith(suffixes):
                continue
            values = value if isinstance(value, list) else [value]
            for v in values:
                v = str(v)
                if '{{' not in v:
                    names.add(v)
                elif jinja:
                    names.update(re.findall(r"'([A-Za-z0-9][A-Za-z0-9_.+-]*)'", v))
    return {n for n in names if '{{' not in n}


def kept(name, globs):
    """host_facts' own matching, on one name."""
    return name in matching({name: None}, globs)


def test_every_package_a_role_installs_is_kept():
    packages = named_in_role_vars(('_packages', '_package', '_dump_packages', 'version_package'))
    assert {'munge', 'slurmd', 'slurm-client', 'prometheus-node-exporter', 'grafana', 'python3-pymysql'} <= packages
    assert sorted(p for p in packages if not kept(p, LISTS['__site_host_packages'])) == []


def test_every_service_a_role_starts_is_kept():
    services = named_in_role_vars(('_service',), jinja=False) | {'munge', 'slurmd', 'slurmctld', 'slurmdbd', 'gpuhpc-slurm-exporter'}
    assert {'prometheus-node-exporter', 'grafana-server', 'nvidia-dcgm-exporter'} <= services
    assert sorted(s for s in services if not kept(s, LISTS['__site_host_services'])) == []


# Facts that are not Ansible's own (setup's): host_facts' and getent's.
NOT_SETUP_FACTS = {'packages', 'services', 'paths', 'tcp_listening', 'getent_group'}


def test_every_ansible_fact_the_collection_reads_is_kept():
    read = set()
    for pattern in ('roles/**/*.yml', 'roles/**/*.j2', 'playbooks/**/*.yml'):
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            read.update(re.findall(r"ansible_facts(?:\[['\"](\w+)['\"]\]|\.(\w+))", open(path).read()))
    read = {a or b for a, b in read}
    # the compute nodes' Slurm node lines, read by the filter slurm_nodes
    read.update(re.findall(r"'(memtotal_mb|processor_\w+)'", open(os.path.join(ROOT, 'plugins', 'filter', 'slurm.py')).read()))
    assert {'os_family', 'distribution_major_version', 'memtotal_mb', 'processor_vcpus'} <= read
    assert sorted(f for f in read - NOT_SETUP_FACTS
                  if not kept('ansible_' + f, LISTS['__site_host_ansible_facts'])) == []


def test_every_path_a_role_looks_for_is_read():
    web = load_role_vars('web_config')
    dcgm = load_role_vars('dcgm_exporter')
    looked_for = {web['__web_config_folders'].replace('{{ __web_config_root }}', web['__web_config_root']),
                  dcgm['__dcgm_exporter_driver_file']}
    assert looked_for == set(LISTS['__site_host_paths'])


def load_role_vars(role):
    return yaml.safe_load(open(os.path.join(ROOT, 'roles', role, 'vars', 'main.yml')))


# The paths the roles put in place with config_files, slurm_config and
# munge_key, by the variable that names them (the Slurm exporter's program,
# Grafana's folders and provisioning files, slurm_facts_*'s folders included).
MANAGED = ('_options_file', '_env_file', '_key_path', '_dropin_dir', 'textfile_dir', '_exporter_bin',
           'conf_dir', 'spool_dir', 'log_dir', 'prolog_dir', 'epilog_dir', '_provider_file', '_datasource_file',
           '_dashboards_dir', '_config_dir', '_ini_file', '_provisioning_dir')


def test_every_file_a_role_puts_in_place_is_read():
    from ansible_collections.gpuhpc.slurm.plugins.module_utils.file_states import covered
    paths = set()
    for pattern in ('roles/*/vars/*.yml', 'roles/*/defaults/main.yml'):
        for path in glob.glob(os.path.join(ROOT, pattern)):
            for key, value in (yaml.safe_load(open(path)) or {}).items():
                if key.endswith(MANAGED) and isinstance(value, str) and value.startswith('/'):
                    paths.add(value)
    # dcgm-exporter's folders are its own role's (no config_files task there)
    paths -= {p for p in paths if 'dcgm' in p}
    assert {'/etc/default/munge', '/etc/munge/munge.key', '/etc/slurm', '/etc/default/slurmd',
            '/etc/systemd/system/slurmd.service.d', '/var/lib/prometheus/node-exporter',
            '/usr/local/libexec/gpuhpc-slurm-exporter', '/etc/grafana/grafana.ini'} <= paths
    patterns = LISTS['__site_host_files']
    secret = {'/etc/slurm/slurmdbd.conf', '/etc/grafana/grafana.ini', '/etc/prometheus/alertmanager.yml'}
    assert sorted(p for p in paths - secret if not covered(p, patterns)) == []
    # a file in one of the folders too (slurm.conf, the configless drop-in, a dashboard)
    for path in ('/etc/slurm/slurm.conf', '/etc/slurm/prolog.d/50-gpuhpc-gpu-job-map',
                 '/etc/systemd/system/slurmd.service.d/gpuhpc-configless.conf',
                 '/var/lib/grafana/dashboards/gpuhpc/slurm.json', '/etc/grafana/provisioning/datasources/gpuhpc.yml'):
        assert covered(path, patterns), path
    # never the files that hold a password (their hash would let whoever reads the facts try guesses)
    for path in ('/etc/slurm/slurmdbd.conf', '/etc/grafana/grafana.ini', '/etc/prometheus/alertmanager.yml',
                 '/etc/gpuhpc/web/prometheus/client-password'):
        assert not covered(path, patterns), path
