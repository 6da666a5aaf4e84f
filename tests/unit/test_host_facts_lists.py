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
