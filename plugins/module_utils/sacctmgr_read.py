# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading what slurmdbd holds through sacctmgr (part of the sacctmgr modules' code).

read_state() reads everything a plan needs in at most six invocations,
whatever the number of entities, with the values normalised; facts() gives
it as plain data (sacctmgr_info). preserve_case_user() reads slurmdbd.conf
as slurmdbd does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import SacctmgrError
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_values import (
    ASSOC_FIELDS, QOS_FIELDS, normalise, show)


def read_state(runner, cluster=None, kinds=('qos', 'accounts', 'users'), need_tres=False, need_qos_use=False):
    """What sacctmgr holds, normalised: at most seven invocations whatever the size.

    With ``need_qos_use`` (a QoS purge), also which clusters' associations use
    each QoS (``qos_use``: {name: set of clusters}): QoS are global to a
    slurmdbd that several clusters may share."""
    state = dict(cluster=None, tres=None, qos={}, accounts={}, users={}, assocs={}, qos_use={})
    if 'accounts' in kinds or 'users' in kinds:
        clusters = [row[0] for row in runner.read('cluster', ['Cluster'])]
        if cluster is None:
            if len(clusters) != 1:
                raise SacctmgrError('cluster_not_registered' if not clusters else 'cluster_ambiguous',
                                    'no cluster is registered with slurmdbd' if not clusters else
                                    'slurmdbd knows several clusters (%s)' % ', '.join(clusters),
                                    'start slurmctld once so it registers the cluster' if not clusters else
                                    'give cluster')
            cluster = clusters[0]
        elif cluster not in clusters:
            raise SacctmgrError('cluster_not_registered', "cluster '%s' is not registered with slurmdbd (known: %s)"
                                % (cluster, ', '.join(clusters) or 'none'),
                                'start slurmctld of that cluster once (it registers itself), or correct cluster')
        state['cluster'] = cluster
    if need_tres:
        state['tres'] = set(('%s/%s' % (t, n) if n else t).lower() for t, n in runner.read('tres', ['Type', 'Name']))
    qos_fields = sorted(QOS_FIELDS)
    for row in runner.read('qos', ['Name'] + [QOS_FIELDS[f][0] for f in qos_fields]):
        state['qos'][row[0]] = dict((f, normalise(QOS_FIELDS[f][2], v, 'qos %s %s' % (row[0], f)))
                                    for f, v in zip(qos_fields, row[1:]))
    if need_qos_use:
        for assoc_cluster, qos, default_qos in runner.read('assoc', ['Cluster', 'QOS', 'DefaultQOS']):
            for name in [q for q in qos.split(',') + [default_qos] if q]:
                state['qos_use'].setdefault(name.lower(), set()).add(assoc_cluster)
    if 'accounts' in kinds or 'users' in kinds:
        for name, descr, org in runner.read('account', ['Account', 'Description', 'Organization']):
            state['accounts'][name] = dict(description=normalise('text', descr, name), organization=normalise('text', org, name))
        assoc_fields = sorted(ASSOC_FIELDS)
        rows = runner.read('assoc', ['Account', 'User', 'Partition', 'ParentName'] +
                           [ASSOC_FIELDS[f][0] for f in assoc_fields],
                           where=['where', 'cluster=' + cluster], options=['WOPLimits'])
        for row in rows:
            account, user, partition, parent = row[:4]
            if partition:
                continue  # partition-specific associations are not managed here
            values = dict((f, normalise(ASSOC_FIELDS[f][2], v, 'association %s/%s %s' % (account, user, f)))
                          for f, v in zip(assoc_fields, row[4:]))
            values['parent'] = parent or None
            state['assocs'][(account, user)] = values
    if 'users' in kinds:
        for name, default, admin in runner.read('user', ['User', 'DefaultAccount', 'AdminLevel']):
            state['users'][name] = dict(default_account=default, admin_level=normalise('admin', admin, name))
    return state


def preserve_case_user(path):
    """Whether slurmdbd.conf at ``path`` sets PreserveCaseUser in Parameters, read
    as slurmdbd reads it (a case-insensitive search in the value); False when
    the file cannot be read."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except (IOError, OSError):
        return False
    for line in lines:
        m = re.match(r'^\s*Parameters\s*=\s*(\S+)', line.split('#', 1)[0], re.I)
        if m and 'preservecaseuser' in m.group(1).lower():
            return True
    return False


def _set_only(values):
    """Fields that are set (not -1 / empty), as a person reads them."""
    return show(dict((k, v) for k, v in values.items() if v not in (-1, None, {}, frozenset(), '')))


def facts(state):
    """read_state() as plain data: qos, accounts, users (for sacctmgr_info)."""
    accounts, users = {}, {}
    for (account, user), values in sorted(state['assocs'].items()):
        if user:
            entry = users.setdefault(user, dict(state['users'].get(user, {}), accounts={}))
            entry['accounts'][account] = _set_only(dict((k, v) for k, v in values.items() if k != 'parent'))
        else:
            accounts[account] = dict(state['accounts'].get(account, {}), **_set_only(values))
    return dict(cluster=state['cluster'], accounts=accounts, users=users,
                qos=dict((name, _set_only(values)) for name, values in state['qos'].items()))
