# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the inventory into Slurm configuration."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os
import re

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.module_utils import (dbcheck, file_states, hostlist, nodestate, slurm_conf,
                                                                   slurm_packages)

# Up to 40 characters: the name prefixes slurmdbd's tables (the longest suffix,
# _assoc_usage_month_table, leaves 40 of MariaDB's 64). Slurm lower-cases it.
CLUSTER_NAME = re.compile(r'^[a-z0-9][a-z0-9_-]{0,39}$')
# A NodeName that hostlist expressions, sinfo and the exporters' labels keep whole.
NODE_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_-]*$')


def hostlist_compress(hosts):
    """Slurm's hostlist expression of node names, as ``scontrol show hostlist``
    writes it: ``['gpu-01', 'gpu-02', 'gpu-04']`` gives ``gpu-[01-02,04]``
    (the zero padding kept; one name stays as it is).

    ``hosts`` is a list of names, or one name."""
    if isinstance(hosts, str):
        hosts = [hosts]
    return hostlist.compress(hosts)


def hostlist_expand(expr):
    """The node names of a Slurm hostlist expression, as ``scontrol show
    hostnames`` lists them: ``gpu-[01-02,04]`` gives ``['gpu-01', 'gpu-02',
    'gpu-04']``; a comma-separated list of expressions gives all of them, in
    order. A malformed expression fails, saying why."""
    try:
        return hostlist.expand(expr)
    except hostlist.HostlistError as e:
        raise AnsibleFilterError(str(e))


def slurm_node_name(host, hostvars):
    """The Slurm NodeName of an inventory host: slurm_node_name, else its short name."""
    return hostvars[host].get('slurm_node_name') or str(host).split('.', maxsplit=1)[0]


def _node_value(hv, facts, var, fact, host, problems):
    value = hv.get(var)
    if value not in (None, '', 0):
        return int(value)
    if fact not in facts:
        problems.append("%s: no hardware facts and no %s: gather facts on the node or set %s" % (host, var, var))
        return 0
    return int(facts[fact])


def _gpus(host, spec, autodetect, problems):
    """Return (count, type, files) of a node's GPUs, or None when it has none."""
    if not spec:
        return None
    if not isinstance(spec, dict):
        problems.append('%s: slurm_node_gpus must be a dict like {count: 2, type: h100, files: "/dev/nvidia[0-1]"}' % host)
        return None
    if spec.get('count') in (None, ''):
        problems.append('%s: slurm_node_gpus has no count: give count (the number of GPUs), e.g. {count: %d}'
                        % (host, len(_expand_files(spec.get('files'))) or 1))
        return None
    count = int(spec['count'])
    if count <= 0:
        return None
    files = spec.get('files')
    if files:
        devices = _expand_files(files)
        if len(devices) != count:
            problems.append('%s: slurm_node_gpus.files %s names %d device(s) but count is %d: make them agree'
                            % (host, files, len(devices), count))
    elif not autodetect:
        files = '/dev/nvidia0' if count == 1 else '/dev/nvidia[0-%d]' % (count - 1)
    return dict(count=count, type=str(spec.get('type') or ''), files=files or '')


def _expand_files(files):
    if not files:
        return []
    try:
        return hostlist.expand(files)
    except hostlist.HostlistError as e:
        return [str(e)]


def node_memory(memtotal_mb, reserved_mb=0, granularity_mb=1):
    """RealMemory from a node's MemTotal: ``reserved_mb`` kept back, then rounded
    down to a multiple of ``granularity_mb``, so that the few MiB a kernel update
    or a firmware change moves MemTotal by do not change slurm.conf's NodeName
    line (and restart slurmctld and every slurmd). A value below one granule is
    kept as it is; at least 1."""
    memory = max(int(memtotal_mb) - int(reserved_mb), 1)
    granularity = max(int(granularity_mb or 1), 1)
    return memory - memory % granularity if memory >= granularity else memory


def slurm_nodes(hosts, hostvars, memory_reserved_mb=0, gres_autodetect='', memory_granularity_mb=1):
    """Node definitions of slurm.conf and gres.conf from the inventory.

    Returns ``{'nodes': [...], 'problems': [...], 'def_mem_per_cpu': MiB}``:
    one entry per group of identical nodes (``name`` is a hostlist such as
    ``gpu-[01-12]``), one message per inconsistency naming the host and the
    variable, and the smallest node's memory per CPU.
    """
    problems, defs, owners = [], [], {}
    for host in hosts:
        hv = hostvars[host]
        facts = hv.get('ansible_facts') or {}
        name = slurm_node_name(host, hostvars)
        if not NODE_NAME.match(name):
            problems.append("%s: the Slurm node name '%s' (%s) is not one Slurm can use: it must start with a "
                            "letter and hold only letters, digits, '-' and '_'; set slurm_node_name for the host"
                            % (host, name, 'slurm_node_name' if hv.get('slurm_node_name') else
                               'the first label of the inventory name'))
        if name in owners:
            problems.append("%s and %s are both the Slurm node '%s': set slurm_node_name on one of them"
                            % (owners[name], host, name))
            continue
        owners[name] = host
        memory = hv.get('slurm_node_real_memory')
        if memory in (None, '', 0):
            if 'memtotal_mb' in facts:
                memory = node_memory(facts['memtotal_mb'], memory_reserved_mb, memory_granularity_mb)
            else:
                problems.append('%s: no hardware facts and no slurm_node_real_memory: gather facts '
                                'on the node or set slurm_node_real_memory' % host)
                memory = 0
        node = dict(
            cpus=_node_value(hv, facts, 'slurm_node_cpus', 'processor_vcpus', host, problems),
            sockets=_node_value(hv, facts, 'slurm_node_sockets', 'processor_count', host, problems),
            cores_per_socket=_node_value(hv, facts, 'slurm_node_cores_per_socket', 'processor_cores', host, problems),
            threads_per_core=_node_value(hv, facts, 'slurm_node_threads_per_core', 'processor_threads_per_core',
                                         host, problems),
            real_memory=int(memory),
            gpus=_gpus(host, hv.get('slurm_node_gpus'), gres_autodetect, problems),
        )
        for group in defs:
            if group['attrs'] == node:
                group['names'].append(name)
                break
        else:
            defs.append(dict(attrs=node, names=[name]))
    nodes = []
    for group in defs:
        node = dict(group['attrs'], name=hostlist.compress(group['names']), hosts=group['names'])
        nodes.append(node)
    # problems are reported once per unique message, in order
    seen, unique = set(), []
    for p in problems:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    # Memory a job gets per CPU unless it asks: the smallest node's share, so
    # that jobs without --mem do not take a whole node each.
    shares = [n['real_memory'] // n['cpus'] for n in nodes if n['cpus'] and n['real_memory']]
    return dict(nodes=nodes, problems=unique, def_mem_per_cpu=min(shares) if shares else 0)


def billing_weights(members, nodes):
    """The default TRESBillingWeights of a partition of ``members``: a GPU is
    billed as the CPUs that come with it (CPUs per GPU of its nodes, the
    smallest where they differ), so that fair share and billing hours count
    GPUs; None for a partition without GPUs (Slurm bills CPUs)."""
    members = set(members)
    ratios = [n['cpus'] / float(n['gpus']['count']) for n in nodes or []
              if n.get('gpus') and n['cpus'] and members & set(n['hosts'])]
    if not ratios:
        return None
    return 'CPU=1.0,GRES/gpu=%s' % ('%.2f' % min(ratios)).rstrip('0').rstrip('.')


def slurm_partitions(partitions, compute_nodes, nodes=None):
    """Resolve partitions: node lists expanded and checked against the compute nodes.

    Returns ``{'partitions': [...], 'problems': [...]}``; a partition without
    ``nodes`` takes every compute node. With ``nodes`` (slurm_nodes' groups),
    a partition without ``tres_billing_weights`` gets billing_weights().
    """
    problems, out = [], []
    known = set(compute_nodes)
    names = set()
    for i, part in enumerate(partitions or []):
        if not isinstance(part, dict) or not part.get('name'):
            problems.append('slurm_partitions[%d] has no name: give each partition a name' % i)
            continue
        name = part['name']
        if name in names:
            problems.append("partition '%s' is defined twice in slurm_partitions" % name)
        names.add(name)
        try:
            members = hostlist.expand(part['nodes']) if part.get('nodes') else list(compute_nodes)
        except hostlist.HostlistError as e:
            problems.append("partition '%s': %s" % (name, e))
            continue
        for node in members:
            if node not in known:
                problems.append("partition '%s' names node '%s', which is not a compute node: "
                                "add it to the slurm_compute group or remove it from the partition" % (name, node))
        if not members:
            problems.append("partition '%s' has no node" % name)
        resolved = dict(part, nodes=hostlist.compress(members))
        if 'tres_billing_weights' not in part and nodes is not None:
            resolved['tres_billing_weights'] = billing_weights(members, nodes)
        out.append(resolved)
    if not out and not problems:
        problems.append('slurm_partitions is empty: define at least one partition')
    return dict(partitions=out, problems=problems)


def slurm_conf_extra_problems(extra, name='slurm_conf_extra', managed=None):
    """One message per key of ``extra`` that is not a slurm.conf option, or
    that the collection writes itself (``managed``: more such keys, with what
    sets each)."""
    return slurm_conf.extra_problems(extra, name, managed)


def slurm_conf_merge(base, extra):
    """slurm.conf's ``(key, value)`` pairs: the collection's ``base`` with the
    site's ``extra`` (slurm_conf_extra) applied; comma lists such as
    SlurmctldParameters or AccountingStorageTRES keep the collection's items."""
    return [list(pair) for pair in slurm_conf.merge_extra(base, extra)]


def slurm_conf_value(value):
    """``value`` written so that Slurm's config parser reads back the same string
    (the preflights refuse what cannot be written; the value is never shown)."""
    try:
        return slurm_conf.conf_value(value)
    except ValueError as e:
        raise AnsibleFilterError('a Slurm config value cannot be written: %s' % e)


def slurm_problems(settings):
    """What is wrong with the slurm role's cluster-wide variables, one message each.

    ``settings`` holds the variables without their ``slurm_`` prefix:
    cluster_name, controller_hosts, compute_hosts, state_save_location,
    dbd_backup, conf_extra, gpu_job_map_dir, package_repository, package_version,
    package_repository_packages, and os_family (of the host that checks). (The nodes and partitions are checked by
    slurm_nodes and slurm_partitions.)
    """
    problems = [e for e in [slurm_cluster_name_error(settings.get('cluster_name'))] if e]
    controllers = list(settings.get('controller_hosts') or [])
    for group in ('controller', 'compute'):
        if not settings.get(group + '_hosts'):
            problems.append('slurm_%s_hosts is empty: put at least one host in the slurm_%s group' % (group, group))
    state = settings.get('state_save_location') or ''
    if len(controllers) > 1 and not state:
        problems.append('slurm_controller has %d hosts (%s): set slurm_state_save_location to a folder they all '
                        'share (NFS), or a backup that takes over starts from an empty state'
                        % (len(controllers), ', '.join(controllers)))
    if state and not state.startswith('/'):
        problems.append("slurm_state_save_location '%s' is not an absolute path" % state)
    if settings.get('dbd_backup') and len(controllers) < 2:
        problems.append('slurm_dbd_backup is true but slurm_controller has %d host(s): a backup slurmdbd runs on the '
                        'second controller; add one, or set slurm_dbd_backup to false' % len(controllers))
    job_map = settings.get('gpu_job_map_dir') or ''
    # The GPU job map's Prolog/Epilog run every program in a folder: a site's go there.
    managed = dict(prolog='a program in the folder slurm_facts_prolog_dir (slurm.conf runs every one there)',
                   epilog='a program in the folder slurm_facts_epilog_dir (slurm.conf runs every one there)'
                   ) if job_map else {}
    problems += slurm_conf_extra_problems(settings.get('conf_extra') or {}, managed=managed)
    problems += slurm_packages.source_problems(settings.get('package_repository') or '',
                                               settings.get('package_version') or '',
                                               settings.get('package_repository_packages') or [],
                                               settings.get('os_family') or 'Debian')
    if job_map and not job_map.startswith('/'):
        problems.append("slurm_gpu_job_map_dir '%s' is not an absolute path: give one (e.g. /run/gpuhpc/gpu-jobs), "
                        "or an empty string for no GPU job map" % job_map)
    return problems


def slurmdbd_problems(settings):
    """What is wrong with the slurmdbd role's variables, one message each.

    ``settings`` holds the variables without their ``slurmdbd_`` prefix:
    storage_host, storage_pass, storage_client_cert, storage_client_key, conf_extra.
    """
    problems = []
    if not settings.get('storage_host'):
        problems.append('slurmdbd_storage_host is empty: give the endpoint of the managed database')
    password = settings.get('storage_pass') or ''
    if not password:
        problems.append('slurmdbd_storage_pass is empty: give the database password (vault it)')
    else:
        try:
            slurm_conf.conf_value(password)
        except ValueError as e:
            problems.append('slurmdbd_storage_pass cannot be written to slurmdbd.conf so that slurmdbd reads '
                            'the same password: %s. Choose another password' % e)
    if bool(settings.get('storage_client_cert')) != bool(settings.get('storage_client_key')):
        problems.append('slurmdbd_storage_client_cert and slurmdbd_storage_client_key go together: '
                        'give both or neither')
    extra = settings.get('conf_extra') or {}
    if not isinstance(extra, dict):
        return problems + ['slurmdbd_conf_extra must be a dict of slurmdbd.conf keys and values, '
                           'like {PurgeJobAfter: 24month}']
    for key, value in extra.items():
        if str(key).lower() in slurm_conf.SLURMDBD_MANAGED:
            problems.append("slurmdbd_conf_extra: '%s' is written by the role; set it with %s"
                            % (key, slurm_conf.SLURMDBD_MANAGED[str(key).lower()]))
        elif str(key).lower() not in slurm_conf.SLURMDBD_KEYS:
            problems.append("slurmdbd_conf_extra: '%s' is not a slurmdbd.conf option (see man slurmdbd.conf); "
                            "check its spelling" % key)
        else:
            try:
                slurm_conf.conf_value(value)
            except ValueError as e:
                problems.append("slurmdbd_conf_extra: the value of '%s' cannot be written: %s" % (key, e))
    return problems


def slurm_conf_changes(old_text, new_text, version=None):
    """Which slurm.conf keys changed, and whether that takes a daemon restart under Slurm ``version``."""
    return slurm_conf.changes(old_text, new_text, version)


def slurm_config_change(pending, result, behind=None):
    """The configuration change of this run that the daemon roles still have to apply.

    ``pending`` is the change not yet applied (written earlier in the run, e.g.
    by slurmdbd's play on the controller); ``result`` is what
    gpuhpc.slurm.slurm_config returned now; ``behind`` names what the running
    daemons lack of the files already in place (filters slurm_config_behind,
    slurm_conf_cache_stale: a change written by an earlier run that never
    reached them), which takes a restart. Returns ``{written, restart,
    node_restart, keys, files, behind}``: ``restart`` when slurmctld must
    restart for slurm.conf, ``node_restart`` when slurmd must (slurm.conf
    needs a restart, or gres.conf / cgroup.conf changed: slurmd reads those
    only at start), ``files`` the names of the files written.
    """
    changed = result.get('changed_files') or []
    main_restart = 'slurm.conf' in changed and bool(result.get('restart'))
    keys = list(pending.get('keys') or [])
    keys += [k for k in result.get('changed_keys') or [] if k not in keys]
    files = list(pending.get('files') or [])
    files += [name for name in changed if name not in files]
    lagging = list(pending.get('behind') or [])
    lagging += [text for text in behind or [] if text not in lagging]
    return {
        'written': bool(pending.get('written')) or bool(result.get('changed')) or bool(lagging),
        'restart': bool(pending.get('restart')) or main_restart or bool(lagging),
        'node_restart': (bool(pending.get('node_restart')) or main_restart or bool(lagging)
                         or any(name != 'slurm.conf' for name in changed)),
        'keys': keys,
        'files': files,
        'behind': lagging,
    }


def slurm_nodes_changed(keys):
    """The nodes whose hardware line a change record's ``keys`` name
    (``gpu-02 Gres gpu:2 -> gpu:3``, from slurm_conf_changes); not the nodes
    added or removed."""
    return sorted(set(m.group(1) for m in (re.match(r'^(\S+) \S+ .* -> ', str(k)) for k in keys or []) if m))


def slurm_config_behind(lines, host, conf_dir):
    """What slurmctld lacks of the files in place: ``['<folder> on <host>
    written after slurmctld started (<time>) and not applied since']``, or [].

    ``lines``: the first controller's ``key=value`` lines (config.yml, "the
    state folder on each controller"): ``ctld_started`` (when slurmctld's
    process started, in seconds since the epoch: a start reads the files,
    and so does a reconfigure from Slurm 23.11, which starts a new process),
    ``conf_written`` (the newest mtime of slurm.conf, gres.conf and
    cgroup.conf), ``conf_applied`` and ``conf_now`` (a digest of the files
    as the slurmctld role's handlers noted them after their last restart or
    reconfigure, and of the files now). Files written after slurmctld
    started and not noted as applied since are a change an earlier run wrote
    and never applied (it ended before its restart, or ran the slurm role
    alone). (``scontrol show config``'s "Configuration data as of" cannot
    tell: it is the time of the answer, src/slurmctld/proc_req.c.) Nothing
    where slurmctld does not run: its start reads the files.
    """
    read = _state_read(lines)
    started, written = read.get('ctld_started', '').strip(), read.get('conf_written', '').strip()
    applied, now = read.get('conf_applied', '').strip(), read.get('conf_now', '').strip()
    if started.isdigit() and written.isdigit() and int(written) > int(started) and (not now or applied != now):
        when = datetime.datetime.fromtimestamp(int(started), datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        return ['%s on %s written after slurmctld started (%s) and not applied since' % (conf_dir, host, when)]
    return []


def slurm_conf_digests(facts, folder, names, read=None):
    """``{name: sha256}`` of the files ``names`` that exist in ``folder``.

    From the fact file_states (gpuhpc.slurm.host_facts: site.yml's facts)
    where its patterns cover those paths, else from ``read`` (the lines of
    ``sha256sum``, the roles' own read); None where neither tells.
    """
    states = (facts or {}).get('file_states') or {}
    paths = ['%s/%s' % (folder.rstrip('/'), name) for name in names]
    if states and all(file_states.covered(path, states.get('patterns') or []) for path in paths):
        found = states.get('paths') or {}
        return dict((name, found[path]['sha256']) for name, path in zip(names, paths)
                    if (found.get(path) or {}).get('sha256'))
    if read is None:
        return None
    digests = {}
    for line in read:
        parts = line.split(None, 1)
        if len(parts) == 2 and re.match(r'^[0-9a-f]{64}$', parts[0]):
            name = os.path.basename(parts[1].strip().lstrip('*'))
            if name in names:
                digests[name] = parts[0]
    return digests


def slurm_conf_cache_stale(cached, current):
    """The names of the files whose copy in a configless slurmd's cache
    (SlurmdSpoolDir/conf-cache: what slurmd fetched at its start, or was last
    sent by a reconfigure; ``cached``, ``{name: sha256}``) differs from the
    controller's (``current``): a change that never reached this slurmd (a
    run that ended early, or left it out with --limit or --tags). A file the
    controller lacks is left out (its run writes it, and then says so)."""
    if cached is None or current is None:
        return []
    return ["%s (slurmd's cached copy differs from the controller's)" % name
            for name in sorted(current) if cached.get(name) != current[name]]


def slurm_config_change_text(change):
    """What a change record (slurm_config_change) wrote, in words, for the
    message of the restart or reconfigure it takes: slurm.conf's changed keys,
    or why none changed (a new file; else its owner, group, mode or comments),
    then the other files written."""
    keys = list(change.get('keys') or [])
    files = list(change.get('files') or [])
    parts = []
    if keys:
        parts.append('slurm.conf: %s' % ', '.join(keys))
    elif 'slurm.conf' in files:
        parts.append('slurm.conf: new' if change.get('restart')
                     else 'slurm.conf: no value (owner, group, mode or comments)')
    parts += [name for name in files if name != 'slurm.conf']
    parts += list(change.get('behind') or [])
    return '; '.join(parts) or 'nothing'


def _state_read(lines):
    """``key=value`` lines (config.yml, "the state folder on each controller") as a dict."""
    return dict(line.split('=', 1) for line in lines or [] if '=' in line)


def _state_items(lines, key):
    """The values of a key that the read repeats (``node_gres``, ``gpu_job``,
    ``node_out``: one line each)."""
    prefix = key + '='
    return [line[len(prefix):] for line in lines or [] if line.startswith(prefix)]


def slurm_state_plan(reads, settings):
    """What the state folder of slurmctld needs before slurm.conf is written.

    ``reads`` maps each controller to what it said (``key=value`` lines): ``old``
    (the StateSaveLocation of its slurm.conf, '' without one), ``old_saved`` and
    ``new_saved`` (``yes`` where that folder holds ``job_state``), ``mount`` (the
    mount point the new folder is on), ``marker`` (``yes`` where it holds
    the marker). ``settings``: ``new`` (the folder this run writes), ``marker``
    (the name of the file the slurmctld role writes into a shared folder),
    ``shared`` (slurm_state_save_location is set), ``db`` (this run's
    slurmdbd_db_check result: ``schema.unfinished_jobs``), ``empty_ok``
    (slurm_state_empty_ok).

    Returns ``{action, from, problems}``: ``migrate`` (stop slurmctld, copy the
    state from ``from`` into the new folder, verify, then write slurm.conf) where
    a controller's current folder holds state and the new one holds none;
    ``none`` otherwise. ``problems`` name, per controller, a start that would
    lose the jobs: an empty new folder while the database has jobs not ended,
    or a shared folder that is neither a mount nor marked. A controller
    without state of its own beside one whose state moves (a backup
    controller added, on the shared folder) gets the state through that
    folder. A controller with no read (the read skipped: a play without
    controllers) is left out.
    """
    new = settings.get('new') or ''
    marker = settings.get('marker') or ''
    unfinished = int((((settings.get('db') or {}).get('schema') or {}).get('unfinished_jobs')) or 0)
    plan = dict(action='none', problems=[], **{'from': ''})
    reads = dict((host, _state_read(lines)) for host, lines in sorted((reads or {}).items()))
    reads = dict((host, read) for host, read in reads.items() if 'mount' in read)
    moving = set()
    for host, read in sorted(reads.items()):
        old = read.get('old') or ''
        if old and old.rstrip('/') != new.rstrip('/') and read.get('old_saved') == 'yes':
            moving.add(host)
            if read.get('new_saved') == 'yes':
                plan['problems'].append(
                    "%s: both the current state folder %s and slurm_state_save_location's %s hold slurmctld's state "
                    "(job_state): move the one that is not current aside, then run again" % (host, old, new))
            else:
                plan.update(action='migrate', **{'from': old})
    for host, read in sorted(reads.items()):
        new_saved = read.get('new_saved') == 'yes'
        if host in moving:
            continue
        if settings.get('shared') and read.get('mount', '/') == '/' and read.get('marker') != 'yes':
            plan['problems'].append(
                "%s: slurm_state_save_location %s is on the root file system and holds no %s: it is not the shared "
                "folder (is its mount missing?). Mount the shared folder there, or, if it is shared another way, "
                "create %s/%s" % (host, new, marker, new, marker))
        # a controller added beside one whose state moves: the state reaches
        # it through the shared folder (state_move.yml checks that it does)
        elif not new_saved and unfinished and not settings.get('empty_ok') and plan['action'] != 'migrate':
            plan['problems'].append(
                "%s: slurmctld would start on %s, which holds no saved state (job_state), while the accounting "
                "database has %d job(s) of the cluster not ended: every running job would be killed and the queue "
                "lost. Mount or restore the state folder; if the state is lost for good, set "
                "slurm_state_empty_ok=true (then close the lost jobs' records: sacctmgr show runawayjobs)"
                % (host, new, unfinished))
    return plan


def slurm_gpu_change_problems(lines, nodes):
    """Why this run must not change the GPUs of a node: one message per node
    whose GPUs (count or type) the inventory changes while a running job uses
    GPUs there. When slurmctld restarts on the new line, it kills such a job
    (src/slurmctld/read_config.c, "Aborting JobId=... due to use of invalid
    GRES configuration": the job's GPU bitmap no longer fits the node; Slurm
    22.05 to 24.11).

    ``lines``: the first controller's ``key=value`` lines (config.yml, "the
    state folder on each controller"): ``node_gres=NAME GRES`` per node as
    slurmctld runs it, ``gpu_job=ID NODELIST`` per running or suspended job
    that holds GPUs. ``nodes``: slurm_nodes' node definitions (``name``, a
    hostlist; ``gpus``: ``{count, type}`` or None). A node slurmctld does not
    know yet is left out.
    """
    running = {}
    current = {}
    for parts in (value.split() for value in _state_items(lines, 'node_gres')):
        if parts:
            current[parts[0]] = nodestate.gres_gpus(parts[1] if len(parts) > 1 else '')
    for parts in (value.split() for value in _state_items(lines, 'gpu_job')):
        if len(parts) == 2:
            for name in hostlist.expand(parts[1]):
                running.setdefault(name, []).append(parts[0])
    problems = []
    for node in nodes or []:
        gpus = node.get('gpus') or {}
        wanted = (str(gpus.get('type') or ''), int(gpus.get('count') or 0))
        for name in hostlist.expand(node['name']):
            if name not in current or name not in running:
                continue
            now = current[name]
            if now[1] == wanted[1] and (now[0] == wanted[0] or not now[0] or not wanted[0]):
                continue
            problems.append(
                "%s: its GPUs change (%s -> %s) while job(s) %s use GPUs there: when slurmctld restarts on the new "
                "line, Slurm kills a running job whose node's GPU count or type changed. Drain the node and let its "
                "jobs end first (playbooks/drain.yml --limit %s), then run again"
                % (name, '%s:%d' % now if now[0] else now[1], '%s:%d' % wanted if wanted[0] else wanted[1],
                   ', '.join(sorted(running[name], key=lambda j: (len(j), j))), name))
    return problems


def slurm_nodes_taken_out(lines, slurm_user='slurm'):
    """The nodes out of service when the run began (DRAIN or DOWN) for any
    reason but slurmctld's own at a registration short of the node's line:
    the slurmd role never resumes them (module slurm_node_state, keep).

    ``lines``: the first controller's ``key=value`` lines (config.yml, "the
    state folder on each controller"): ``node_out=NAME USER REASON`` (sinfo's
    ``%N %u %E``)."""
    out = set()
    for parts in (value.split(None, 2) for value in _state_items(lines, 'node_out')):
        if not parts:
            continue
        user = parts[1] if len(parts) > 1 else ''
        if not nodestate.registration_reason(parts[2] if len(parts) > 2 else '', user, slurm_user):
            out.add(parts[0])
    return sorted(out)


_IN_SERVICE = re.compile(r'^(idle|mixed|allocated|completing)$')


def slurm_nodes_service(lines, slurm_user='slurm'):
    """The nodes' states, and which are out of service by fault, from
    ``sinfo -h -N -o '%N %T %u %E'`` (a node is listed once per partition):
    ``{'states': {NAME: STATE}, 'out': [NAME], 'by_person': {NAME: 'USER: REASON'}}``.

    ``out``: the nodes that cannot run jobs (any state but idle, mixed,
    allocated and completing; a not-responding node's state ends in ``*``)
    and that nobody took out on purpose: the reason is slurmctld's own (its
    user is ``slurm_user``: not responding, a registration short of the
    node's line, a failed epilog), or there is none, or its user is unknown
    where sinfo ran (``Unk(UID)``). ``by_person``: those a
    person or a Day-2 playbook drained or set DOWN with a reason; runs leave
    them out of service (ReturnToService=1), so they are reported, not
    counted as a fault."""
    states, out, by_person = {}, [], {}
    for line in lines or []:
        parts = line.split(None, 3)
        if len(parts) < 2 or parts[0] in states:
            continue
        name, state = parts[0], parts[1].lower()
        user = parts[2] if len(parts) > 2 else ''
        reason = parts[3].strip() if len(parts) > 3 else ''
        states[name] = state
        if _IN_SERVICE.match(state):
            continue
        known = user not in ('', '(null)', 'Unknown', slurm_user) and not user.startswith('Unk(')
        if known and reason.lower() not in ('', 'none', '(null)'):
            by_person[name] = '%s: %s' % (user, reason)
        else:
            out.append(name)
    return dict(states=states, out=out, by_person=by_person)


def slurm_users_unknown(results, names):
    """Which of ``names`` (slurm_accounting_users' names) each controller
    cannot name: ``{host: [name]}`` from the results of ``getent passwd
    NAME...`` run on each (a loop over the controllers: ``item`` the host,
    ``stdout_lines`` the entries found). slurmctld maps a job's uid to its
    user by name; on a controller that cannot, the user's jobs are refused
    ("Invalid account or account/partition combination specified"), there or
    after a takeover. A controller whose read failed otherwise (no
    ``stdout_lines``) is left out."""
    unknown = {}
    for result in results or []:
        if result.get('skipped') or 'stdout_lines' not in result:
            continue
        found = set(line.split(':', 1)[0] for line in result['stdout_lines'])
        missing = [name for name in names or [] if name not in found]
        if missing:
            unknown[result['item']] = missing
    return unknown


def slurm_jobs_text(reads):
    """The jobs the cluster runs and queues, in words, from the first
    controller's read (``jobs_running``, ``jobs_pending``; see
    slurm_state_plan): what a restart or a state move must keep. '' where
    nothing was read (slurmctld not answering: no number is given)."""
    first = _state_read(next(iter((reads or {}).values()), []))
    running, pending = first.get('jobs_running', ''), first.get('jobs_pending', '')
    if not (running.strip().isdigit() and pending.strip().isdigit()):
        return ''
    return '%s running and %s pending job(s)' % (int(running), int(pending))


# slurm.conf's MaxJobId when it is not set (0x03ff0000, src/common/slurm_protocol_defs.h).
DEFAULT_MAX_JOB_ID = 67043328


def slurm_first_job_id(read, db_check=None, conf_extra=None, state_moved=False):
    """FirstJobId for slurm.conf, or 0 for none.

    ``read`` is what the first controller said: ``saved`` or ``none`` (whether
    slurmctld's StateSaveLocation holds job state), then the FirstJobId of its
    slurm.conf, if any. ``db_check`` is the result of slurmdbd_db_check in this
    run (``schema.last_job_id``: the id of the cluster's newest job in the
    accounting database). ``conf_extra`` is slurm_conf_extra, whose MaxJobId
    (if any; else Slurm's default) bounds the result. ``state_moved``: this
    run moves the saved state into the folder (slurm_state_plan), which is
    then as good as saved.

    With saved state, slurmctld numbers from its state: the FirstJobId written
    before is kept (a change would rewrite slurm.conf for nothing). Without
    saved state, it is computed again: after the newest job in the database
    (else slurmctld would number from 1 again, over the history), from 1 again
    (none) where that reaches MaxJobId, as Slurm itself wraps (a FirstJobId
    above MaxJobId is refused by every daemon; equal to it, no job can be
    submitted), and none on a cluster without jobs (0: Ansible would make
    None an empty string).
    """
    lines = [line.strip() for line in read or [] if line.strip()]
    saved = bool(state_moved) or (bool(lines) and lines[0] == 'saved')
    current = [line for line in lines[1:] if line.isdigit()]
    if saved:
        return int(current[-1]) if current else 0
    last = ((db_check or {}).get('schema') or {}).get('last_job_id')
    limit = int(dict((str(k).lower(), v) for k, v in (conf_extra or {}).items()).get('maxjobid')
                or DEFAULT_MAX_JOB_ID)
    if last and int(last) + 1 < limit:
        return int(last) + 1
    return 0


def slurm_gpus_visible(text):
    """How many GPUs a node shows (``nvidia-smi -L``, MIG devices counted as
    Slurm counts them, or ``/dev/nvidiaN`` lines), for a health check against
    Slurm's count."""
    return nodestate.gpus_visible(text)


def slurm_cluster_name_error(name):
    """'' when ``name`` is a cluster name Slurm accepts, else why not."""
    if not CLUSTER_NAME.match(str(name)):
        return ("slurm_cluster_name '%s' is not a name Slurm accepts: use 1 to 40 lowercase letters, digits, "
                "'-' or '_', starting with a letter or digit (it names tables in the accounting database, "
                "and Slurm lower-cases it)" % name)
    return ''


def slurm_version(text):
    """'MAJOR.MINOR' of a Slurm version string such as '24.11.5-4+deb13u1' (for the version test)."""
    release = dbcheck.parse_release(str(text))
    if release is None:
        raise AnsibleFilterError('no Slurm version in %r' % text)
    return '%d.%02d' % release[:2]


def account_tree(accounts, parent=None, path=()):
    """Accounts given as a tree (sub-accounts under `children`) as a flat list, each naming its parent."""
    flat = []
    for item in accounts or []:
        if not isinstance(item, dict) or not item.get('name'):
            raise AnsibleFilterError('slurm_accounting_accounts%s: every account needs a name, got %r'
                                     % (''.join('[%s]' % p for p in path), item))
        entry = dict((k, v) for k, v in item.items() if k != 'children')
        if parent is not None:
            if entry.get('parent') not in (None, parent):
                raise AnsibleFilterError("slurm_accounting_accounts: account %s sits under %s but names parent %s; "
                                         "drop its parent or move it" % (entry['name'], parent, entry['parent']))
            entry['parent'] = parent
        flat.append(entry)
        flat.extend(account_tree(item.get('children') or [], entry['name'], path + (entry['name'],)))
    return flat


def db_check_report(result, host='', port=''):
    """The result of gpuhpc.slurm.slurmdbd_db_check as lines for a person."""
    return dbcheck.report_lines(result, host, port)


def slurm_package_files(settings):
    """{path: content} of the apt source and preferences from the slurm_package_* variables
    (``settings`` without the ``slurm_package_`` prefix: repository, version, repository_packages)."""
    return slurm_packages.apt_files(settings.get('repository') or '', settings.get('version') or '',
                                    list(settings.get('repository_packages') or []))


def slurm_upgrade_problems(installed, target):
    """Why the upgrade to ``target`` cannot start: one message (with its fix) each.
    ``installed``: host -> installed Slurm version ('' where none)."""
    return ['%s: %s' % (p['message'], p['fix']) for p in dbcheck.upgrade_problems(installed or {}, str(target or ''))]


def slurm_installed_packages(packages):
    """The Slurm packages (names) among ansible_facts.packages."""
    return slurm_packages.installed_slurm_packages(packages)


def slurm_packages_behind(packages, version):
    """'name version' of each installed Slurm package that is not at ``version``."""
    return slurm_packages.packages_behind(packages or {}, str(version))


def slurm_hosts_without_facts(hosts, hostvars):
    """The hosts whose facts lack their memory (setup's hardware subset, or
    host_facts' cpu_memory): those whose facts a run must read before it can
    write their node lines. One pass over the hosts, so that a task loops over
    only these, not over every compute node with a skip each."""
    return [host for host in hosts
            if 'memtotal_mb' not in (hostvars[host].get('ansible_facts') or {})]


def slurm_installed_versions(hosts, hostvars):
    """host -> the installed Slurm version (of its slurm_facts_version_package; '' where none),
    from each host's package facts."""
    found = {}
    for host in hosts:
        hv = hostvars[host]
        packages = (hv.get('ansible_facts') or {}).get('packages') or {}
        name = hv.get('slurm_facts_version_package') or 'slurm-client'
        found[host] = str(packages[name][0].get('version', '')) if packages.get(name) else ''
    return found


class FilterModule(object):
    def filters(self):
        return {
            'hostlist_compress': hostlist_compress,
            'hostlist_expand': hostlist_expand,
            'slurm_node_name': slurm_node_name,
            'slurm_nodes': slurm_nodes,
            'slurm_partitions': slurm_partitions,
            'slurm_conf_changes': slurm_conf_changes,
            'slurm_config_change': slurm_config_change,
            'slurm_config_change_text': slurm_config_change_text,
            'slurm_config_behind': slurm_config_behind,
            'slurm_nodes_changed': slurm_nodes_changed,
            'slurm_gpu_change_problems': slurm_gpu_change_problems,
            'slurm_nodes_taken_out': slurm_nodes_taken_out,
            'slurm_nodes_service': slurm_nodes_service,
            'slurm_users_unknown': slurm_users_unknown,
            'slurm_conf_digests': slurm_conf_digests,
            'slurm_conf_cache_stale': slurm_conf_cache_stale,
            'slurm_first_job_id': slurm_first_job_id,
            'slurm_conf_value': slurm_conf_value,
            'slurm_conf_merge': slurm_conf_merge,
            'slurm_gpus_visible': slurm_gpus_visible,
            'slurm_state_plan': slurm_state_plan,
            'slurm_jobs_text': slurm_jobs_text,
            'slurmdbd_problems': slurmdbd_problems,
            'slurm_problems': slurm_problems,
            'slurm_package_files': slurm_package_files,
            'slurm_upgrade_problems': slurm_upgrade_problems,
            'slurm_installed_packages': slurm_installed_packages,
            'slurm_installed_versions': slurm_installed_versions,
            'slurm_hosts_without_facts': slurm_hosts_without_facts,
            'slurm_packages_behind': slurm_packages_behind,
            'slurm_version': slurm_version,
            'db_check_report': db_check_report,
            'account_tree': account_tree,
        }
