# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml's converge records: which GPU nodes a rerun may skip.

At the end of a full run, site.yml writes on each GPU node it converged a
record: the day and a digest of everything the node's roles read, as far as
the run can know it at its start (the collection's code, Ansible's version,
every host's inventory variables, the groups, the compute nodes' hardware
facts, the controllers' munge key and Slurm files, and the node's own packages,
services and managed files). A later run whose digest of the same inputs
gives the same record, on the same day, finds nothing to do there: it skips
the roles' plays on that node. Any difference, or a new day, runs them all.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import hashlib
import json
import os
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.module_utils.file_states import covered

# What a host's variables hold that is not the inventory's: Ansible's magic
# variables of the run, the facts (compared apart), and the runtime facts of
# the collection (named __...). site_full_run is the switch that turns the
# skip off, not an input of a role.
_NOT_INVENTORY = frozenset((
    'ansible_check_mode', 'ansible_collection_name', 'ansible_config_file', 'ansible_dependent_role_names',
    'ansible_diff_mode', 'ansible_facts', 'ansible_forks', 'ansible_inventory_sources', 'ansible_limit',
    'ansible_local', 'ansible_loop', 'ansible_loop_var', 'ansible_parent_role_names', 'ansible_parent_role_paths',
    'ansible_play_batch', 'ansible_play_hosts', 'ansible_play_hosts_all', 'ansible_play_name',
    'ansible_play_role_names', 'ansible_playbook_python', 'ansible_role_name', 'ansible_role_names',
    'ansible_run_tags', 'ansible_search_path', 'ansible_skip_tags', 'ansible_verbosity', 'ansible_version',
    'group_names', 'groups', 'hostvars', 'inventory_dir', 'inventory_file', 'inventory_hostname',
    'inventory_hostname_short', 'module_setup', 'omit', 'play_hosts', 'playbook_dir', 'role_name', 'role_names',
    'role_path', 'site_full_run',
))
# The facts that say what is on a host, as opposed to what it is; and the
# TCP ports listening (gather: ports), which a role reads only to wait for them
# after a start, and which a running job opens too.
_STATE_FACTS = ('packages', 'services', 'paths', 'file_states')
_NOT_COMPARED = ('tcp_listening',)
_CODE_PARTS = ('meta', 'playbooks', 'plugins', 'roles')
_code = {}


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode('utf-8')).hexdigest()


def code_digest(root=None):
    """The digest of the collection's code (meta, playbooks, plugins, roles): a new
    release or a local change of a template gives another."""
    root = root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in _code:
        sha = hashlib.sha256()
        for part in _CODE_PARTS:
            for folder, dirs, files in sorted(os.walk(os.path.join(root, part))):
                dirs[:] = sorted(d for d in dirs if d != '__pycache__')
                for name in sorted(f for f in files if not f.endswith('.pyc')):
                    path = os.path.join(folder, name)
                    sha.update(os.path.relpath(path, root).encode('utf-8') + b'\0')
                    with open(path, 'rb') as f:
                        sha.update(hashlib.sha256(f.read()).digest())
        _code[root] = sha.hexdigest()
    return _code[root]


def inventory_values(variables):
    """A host's inventory variables, templated, without the run's magic
    variables, the facts and the collection's runtime facts (__...).
    variables: hostvars[host]."""
    values = {}
    for name in sorted(variables):
        if name in _NOT_INVENTORY or name.startswith('__'):
            continue
        try:
            values[name] = variables[name]
        except Exception as e:  # a lookup that fails: the role would fail on it too
            values[name] = '<%s>' % type(e).__name__
    return values


def site_inventory_digest(hosts, hostvars, groups):
    """The digest of every host's inventory variables and of the groups: one
    changed variable, on any host, gives another."""
    if not isinstance(groups, dict):
        raise AnsibleFilterError('site_inventory_digest expects the groups variable (a dict)')
    return _digest({'groups': groups, 'hosts': dict((str(h), inventory_values(hostvars[h])) for h in hosts)})


def _paths(facts):
    """path -> its state, from the fact file_states (gpuhpc.slurm.host_facts)."""
    return (facts.get('file_states') or {}).get('paths') or {}


def _matching(paths, patterns):
    """The paths that the patterns cover, by the rules of site.yml's file patterns (glob's)."""
    return dict((path, state) for path, state in paths.items() if covered(path, patterns))


def site_converge_records(nodes, hostvars, inventory, settings, today=None):
    """node -> the record site.yml writes on it after a full run, from the
    facts the run holds now, for each of nodes.

    inventory: site_inventory_digest of the run. settings (site.yml's
    __site_converge): record (the record's path on a node), compute (every
    compute node: the hardware of each is in every node's Slurm files),
    controllers (whose packages, and files matching controller_files, the
    nodes follow: the munge key, Slurm's files), ignore (patterns of a node's
    managed paths whose state changes as the node works: Slurm's spool; left
    out), ansible_version. Patterns follow the rules of the fact file_states
    (glob's: * stops at /). today: the UTC day (YYYY-MM-DD), for tests."""
    try:
        record, compute, controllers = settings['record'], list(settings['compute']), list(settings['controllers'])
        controller_files, ignore = list(settings['controller_files']), list(settings['ignore'])
        ansible_version = settings['ansible_version']
    except (KeyError, TypeError) as e:
        raise AnsibleFilterError('site_converge_records: settings needs record, compute, controllers, '
                                 'controller_files, ignore and ansible_version (%s)' % e)
    unknown = [str(n) for n in nodes if n not in compute]
    if unknown:
        raise AnsibleFilterError('site_converge_records: not compute nodes: %s' % ', '.join(unknown))
    facts = dict((str(h), hostvars[h].get('ansible_facts') or {}) for h in compute + controllers)
    missing = [h for h, f in facts.items() if 'file_states' not in f]
    cluster = {
        'code': code_digest(), 'ansible': str(ansible_version), 'inventory': str(inventory),
        'nodes': dict((str(h), dict((k, v) for k, v in facts[str(h)].items() if k not in _STATE_FACTS + _NOT_COMPARED))
                      for h in compute),
        'controllers': dict((str(h), {'packages': facts[str(h)].get('packages'),
                                      'files': _matching(_paths(facts[str(h)]), controller_files)})
                            for h in controllers),
        'missing': sorted(missing),
    }
    shared = _digest(cluster)
    day = today or datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')
    records = {}
    for node in nodes:
        own = dict((k, facts[str(node)].get(k)) for k in _STATE_FACTS)
        paths = _paths(facts[str(node)])
        left_out = _matching(paths, [record] + ignore)
        own['file_states'] = dict((path, state) for path, state in paths.items() if path not in left_out)
        records[str(node)] = 'gpuhpc.slurm site.yml converged this node on %s: %s\n' % (
            day, _digest({'cluster': shared, 'node': own}))
    return records


def site_converged(records, hostvars, record, full_run=False):
    """The nodes whose record on the host (its SHA-256 in the fact
    file_states) is the one expected now: nothing a role reads changed since a
    full run converged them. None with full_run (site_full_run)."""
    if full_run:
        return []
    found = []
    for node, content in sorted(records.items()):
        sha = (_paths(hostvars[node].get('ansible_facts') or {}).get(record) or {}).get('sha256')
        if sha and sha == hashlib.sha256(content.encode('utf-8')).hexdigest():
            found.append(node)
    return found


# The tags of the roles' tasks (tests/unit/test_task_tags.py), and the
# special ones that select them.
_ROLE_TAG = re.compile(r'^[a-z0-9_]+_(install|configure|run)$')
_SPECIAL_TAGS = ('all', 'always', 'tagged')


def site_whole_run(skip_tags, run_tags):
    """Whether --tags and --skip-tags (ansible_skip_tags, ansible_run_tags)
    leave every task of the roles in the run, so that a GPU node that it
    converged may get its record: no --tags, and no skipped tag that a role's
    task carries (molecule's notest tags, say, leave them all)."""
    if list(run_tags or ['all']) != ['all']:
        return False
    return not any(tag in _SPECIAL_TAGS or _ROLE_TAG.match(str(tag)) for tag in skip_tags or [])


class FilterModule(object):
    def filters(self):
        return {
            'site_converge_records': site_converge_records,
            'site_converged': site_converged,
            'site_inventory_digest': site_inventory_digest,
            'site_whole_run': site_whole_run,
        }
