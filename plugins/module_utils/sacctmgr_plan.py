# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning the sacctmgr writes (part of the sacctmgr modules' code).

plan_all() compares the wanted QoS, accounts and users with read_state()'s
and returns a Plan: the few batched commands that make the difference, in a
safe order (QoS, then accounts parents first, then users; removals in
reverse), and for each entity what changes (changes, and the diff's before
and after). Entities that need the same change share one command.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import SacctmgrError
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_values import (
    ACCOUNT_FIELDS, ASSOC_FIELDS, QOS_FIELDS, USER_FIELDS, entity_name, normalise, set_clause, show)

PROTECTED_QOS = ('normal',)
PROTECTED_ACCOUNTS = ('root',)
PROTECTED_USERS = ('root',)

# change kind (also sacctmgr's entity word) -> section of the diff
SECTIONS = dict(qos='qos', account='accounts', user='users')


class Plan:
    """Commands in the order they must run, with what each changes.

    steps: (args, [entity names]) in order; changes: {kind, name, action,
    fields} per entity; before and after: the diff, per section and entity.
    The planners record each entity through added(), modified(), removed(),
    removing() or purge(), and the commands through add(), batch() and
    deletions().
    """

    def __init__(self):
        self.steps = []  # (args, [entity labels])
        self.changes = []  # {kind, name, action, fields}
        self.before = dict(qos={}, accounts={}, users={})
        self.after = dict(qos={}, accounts={}, users={})
        self.deletes = dict((kind, []) for kind in SECTIONS)  # entities removed whole, for deletions()
        self._later = dict((kind, []) for kind in SECTIONS)  # their changes, for removals()

    def add(self, args, labels):
        """One command (sacctmgr's arguments after -i) and the entities it changes."""
        self.steps.append((args, labels))

    def batch(self, groups, make_args):
        """One command per group of entities that need the same change:
        ``make_args('name1,name2', key)`` for each key of ``groups`` (key -> names)."""
        for key in sorted(groups, key=repr):
            names = sorted(groups[key])
            self.add(make_args(','.join(names), key), names)

    def _change(self, kind, name, action, fields):
        self.changes.append(dict(kind=kind, name=name, action=action, fields=fields))

    def added(self, kind, name, values):
        """A new entity, with the values it gets."""
        self.after[SECTIONS[kind]][name] = show(values)
        self._change(kind, name, 'add', show(values))

    def modified(self, kind, name, changes, current):
        """An entity whose fields ``changes`` (field -> wanted) change; ``current``
        holds their values now."""
        self.before[SECTIONS[kind]][name] = show(dict((f, current.get(f)) for f in changes))
        self.after[SECTIONS[kind]][name] = show(changes)
        self._change(kind, name, 'modify', show(changes))

    def removed(self, kind, name, before, after, fields):
        """A removal recorded at once, with the diff as given (a user leaving accounts).
        A user removed whole also goes to to_delete()."""
        self.before[SECTIONS[kind]][name] = before
        self.after[SECTIONS[kind]][name] = after
        self._change(kind, name, 'delete', fields)

    def to_delete(self, kind, name):
        """The entity goes into its kind's delete command (deletions())."""
        self.deletes[kind].append(name)

    def removing(self, kind, name, before):
        """An entity removed whole, with its values now. Its change is recorded by
        removals(), after the adds and changes of its kind, as its command runs
        after theirs."""
        self.before[SECTIONS[kind]][name] = before
        self.to_delete(kind, name)
        self._later[kind].append(name)

    def purge(self, kind, present, listed, keep, before):
        """removing() each entity of ``present`` (in its order) that is neither
        ``listed`` nor in ``keep``; ``before(name)`` gives its values now."""
        for name in present:
            if name not in listed and name not in keep:
                self.removing(kind, name, before(name))

    def removals(self, kind):
        """Record the changes of the entities of ``kind`` given to removing()."""
        for name in self._later[kind]:
            self._change(kind, name, 'delete', {})
        self._later[kind] = []

    def deletions(self, where):
        """The delete commands, last and in reverse order: users, accounts, QoS.
        ``where`` (the cluster) goes with users and accounts; QoS are global."""
        for kind in ('user', 'account', 'qos'):
            names = sorted(set(self.deletes[kind]))
            if names:
                self.add(['delete', kind, 'where', 'name=' + ','.join(names)] + (where if kind != 'qos' else []),
                         names)


def _wanted_fields(entity, fields, what):
    return dict((f, normalise(fields[f][2], entity.get(f), '%s %s' % (what, f)))
                for f in fields if entity.get(f) is not None)


def _changed(wanted, current):
    return dict((f, v) for f, v in wanted.items() if current.get(f) != v)


def _check_refs(state, present_qos, entity, what):
    for field in ('qos', 'default_qos'):
        value = entity.get(field)
        if value is None:
            continue
        names = value if isinstance(value, frozenset) else frozenset([value]) if value else frozenset()
        unknown = sorted(n for n in names if n not in state['qos'] and n not in present_qos)
        if unknown:
            raise SacctmgrError('unknown_qos', "%s: QoS %s in %s do(es) not exist" % (what, ', '.join(unknown), field),
                                'add the QoS first (slurm_accounting_qos / sacctmgr_qos), or correct %s' % field)


def _check_tres(state, values, what):
    if state['tres'] is None:
        return
    for field, value in values.items():
        if isinstance(value, dict):
            for name in value:
                if name not in state['tres']:
                    fix = ('add %s to AccountingStorageTRES in slurm.conf (slurm_conf_extra) and restart slurmctld; '
                           'slurmctld must have registered with slurmdbd since' % name)
                    raise SacctmgrError('unknown_tres', "%s: %s names TRES '%s', which slurmdbd does not know"
                                        % (what, field, name), fix)


def plan_qos(plan, state, qos, purge):
    adds, mods = {}, {}
    for q in qos:
        name = q['name']  # checked by _names()
        current = state['qos'].get(name)
        if q.get('state', 'present') == 'absent':
            if name in PROTECTED_QOS:
                raise SacctmgrError('protected', "qos %s: the QoS '%s' cannot be removed" % (name, name),
                                    'keep it (Slurm needs it)')
            if current is not None:
                plan.removing('qos', name, show(current))
            continue
        wanted = _wanted_fields(q, QOS_FIELDS, 'qos %s' % name)
        _check_tres(state, wanted, 'qos %s' % name)
        if current is None:
            key = tuple(set_clause(QOS_FIELDS, wanted, adding=True))
            adds.setdefault(key, []).append(name)
            plan.added('qos', name, wanted)
            continue
        changes = _changed(wanted, current)
        if changes:
            key = tuple(set_clause(QOS_FIELDS, changes, current))
            mods.setdefault(key, []).append(name)
            plan.modified('qos', name, changes, current)
    if purge:
        # QoS are global: one an association of another cluster uses (a
        # slurmdbd several clusters share) is that cluster's too, and is kept
        others = set(name for name, clusters in (state.get('qos_use') or {}).items()
                     if clusters - set([state.get('cluster')]))
        plan.purge('qos', sorted(state['qos']), set(q['name'] for q in qos), set(PROTECTED_QOS) | others,
                   lambda name: show(state['qos'][name]))
    plan.batch(adds, lambda names, key: ['add', 'qos', 'name=' + names] + list(key))
    plan.batch(mods, lambda names, key: ['modify', 'qos', 'where', 'name=' + names, 'set'] + list(key))
    plan.removals('qos')


def _depths(accounts, state):
    """Depth of each wanted account below root; parents must exist or be wanted."""
    parents = dict((a['name'], a.get('parent') or 'root') for a in accounts if a.get('state', 'present') == 'present')
    depth = {}

    def walk(name, seen):
        if name in depth:
            return depth[name]
        if name in seen:
            raise SacctmgrError('parent_cycle', 'account %s: its parents form a cycle (%s)'
                                % (name, ' -> '.join(seen + [name])), 'correct parent')
        parent = parents[name]
        if parent in parents:
            depth[name] = walk(parent, seen + [name]) + 1
        elif parent == 'root' or (parent, '') in state['assocs']:
            depth[name] = 1
        else:
            raise SacctmgrError('parent_missing', "account %s: the parent account '%s' does not exist in cluster %s"
                                % (name, parent, state['cluster']),
                                'add %s first (list it before or with %s), or correct parent' % (parent, name))
        return depth[name]

    for name in parents:
        walk(name, [])
    return depth


def _ancestors(accounts, state):
    """Every account above a wanted one, through the wanted parents first and
    the parents slurmdbd holds above them."""
    parent = dict((name, values.get('parent')) for (name, user), values in state['assocs'].items() if not user)
    parent.update((a['name'], a.get('parent') or 'root') for a in accounts if a.get('state', 'present') == 'present')
    keep = set()
    for a in accounts:
        if a.get('state', 'present') != 'present':
            continue
        name = parent.get(a['name'])
        while name and name not in keep:
            keep.add(name)
            name = parent.get(name)
    return keep


def plan_accounts(plan, state, accounts, purge, present_qos):
    cluster = state['cluster']
    depth = _depths(accounts, state)
    levels = {}
    acct_mods, assoc_mods, moves = {}, {}, {}
    for a in accounts:
        name = a['name']  # checked by _names()
        label = 'account %s' % name
        exists = (name, '') in state['assocs']
        if a.get('state', 'present') == 'absent':
            if name in PROTECTED_ACCOUNTS:
                raise SacctmgrError('protected', "%s: the account 'root' cannot be removed" % label, 'keep it')
            if exists:
                plan.removing('account', name, show(state['assocs'][(name, '')]))
            continue
        parent = a.get('parent') or 'root'
        assoc = _wanted_fields(a, ASSOC_FIELDS, label)
        info = _wanted_fields(a, ACCOUNT_FIELDS, label)
        _check_refs(state, present_qos, assoc, label)
        _check_tres(state, assoc, label)
        if not exists:
            key = (parent, tuple(set_clause(ACCOUNT_FIELDS, info, adding=True) +
                                 set_clause(ASSOC_FIELDS, assoc, adding=True)))
            levels.setdefault(depth[name], {}).setdefault(key, []).append(name)
            plan.added('account', name, dict(assoc, parent=parent, **info))
            continue
        current = state['assocs'][(name, '')]
        info_changes = _changed(info, state['accounts'].get(name, {}))
        assoc_changes = _changed(assoc, current)
        if info_changes:
            acct_mods.setdefault(tuple(set_clause(ACCOUNT_FIELDS, info_changes)), []).append(name)
        if assoc_changes:
            assoc_mods.setdefault(tuple(set_clause(ASSOC_FIELDS, assoc_changes, current)), []).append(name)
        if current.get('parent') != parent and name not in PROTECTED_ACCOUNTS:
            moves.setdefault(depth[name], {}).setdefault(parent, []).append(name)
            assoc_changes['parent'] = parent
        changes = dict(info_changes, **assoc_changes)
        if changes:
            plan.modified('account', name, changes, dict(state['accounts'].get(name, {}), **current))
    if purge:
        # Deleting an account deletes its subtree: never an ancestor of one that stays.
        plan.purge('account', [name for (name, user) in sorted(state['assocs']) if not user],
                   set(a['name'] for a in accounts), _ancestors(accounts, state) | set(PROTECTED_ACCOUNTS),
                   lambda name: show(state['assocs'][(name, '')]))
    where = ['cluster=' + cluster]
    for level in sorted(levels):
        plan.batch(levels[level],
                   lambda names, key: ['add', 'account', 'name=' + names] + where + ['parent=' + key[0]] + list(key[1]))
    for level in sorted(moves):
        plan.batch(moves[level], lambda names, parent: ['modify', 'account', 'where', 'name=' + names] + where +
                   ['set', 'parent=' + parent])
    plan.batch(acct_mods, lambda names, key: ['modify', 'account', 'where', 'name=' + names, 'set'] + list(key))
    plan.batch(assoc_mods, lambda names, key: (['modify', 'account', 'where', 'name=' + names] + where +
                                               ['set'] + list(key)))
    plan.removals('account')


def plan_users(plan, state, users, purge, present_qos, present_accounts):
    cluster = state['cluster']
    where = ['cluster=' + cluster]
    adds, assoc_adds, assoc_dels, user_mods, assoc_mods = {}, {}, {}, {}, {}
    for u in users:
        name = u['name']  # checked by _names()
        label = 'user %s' % name
        mine = dict((acct, v) for (acct, user), v in state['assocs'].items() if user == name)
        if u.get('state', 'present') == 'absent':
            if name in PROTECTED_USERS:
                raise SacctmgrError('protected', "%s: the user 'root' cannot be removed" % label, 'keep it')
            gone = sorted(set(u.get('accounts') or []) & set(mine)) if u.get('accounts') else sorted(mine)
            if gone and set(gone) == set(mine):
                plan.to_delete('user', name)
            for acct in gone if set(gone) != set(mine) else []:
                assoc_dels.setdefault(acct, []).append(name)
            if gone:
                plan.removed('user', name, dict(accounts=sorted(mine)), dict(accounts=sorted(set(mine) - set(gone))),
                             dict(accounts=gone))
            continue
        default = u.get('default_account')
        if not default:
            raise SacctmgrError('bad_value', '%s: default_account is required' % label,
                                'give default_account (the account jobs are charged to by default)')
        wanted_accounts = sorted(set([default] + list(u.get('accounts') or [])))
        for acct in wanted_accounts:
            if (acct, '') not in state['assocs'] and acct not in present_accounts:
                raise SacctmgrError('account_missing', "%s: account '%s' does not exist in cluster %s"
                                    % (label, acct, cluster), 'add the account first (slurm_accounting_accounts)')
        info = _wanted_fields(u, USER_FIELDS, label)
        assoc = _wanted_fields(u, ASSOC_FIELDS, label)
        _check_refs(state, present_qos, assoc, label)
        _check_tres(state, assoc, label)
        current_info = state['users'].get(name)
        if current_info is None or not mine:
            settings = (set_clause(USER_FIELDS, dict(info, default_account=default), adding=True) +
                        set_clause(ASSOC_FIELDS, assoc, adding=True))
            key = (tuple(wanted_accounts), default, tuple(settings))
            adds.setdefault(key, []).append(name)
            plan.added('user', name, dict(assoc, accounts=wanted_accounts, **info))
            continue
        changes = {}
        missing = [a for a in wanted_accounts if a not in mine]
        extra = sorted(a for a in mine if a not in wanted_accounts) if u.get('accounts') is not None else []
        if missing:
            assoc_adds.setdefault((tuple(missing), tuple(set_clause(ASSOC_FIELDS, assoc, adding=True))),
                                  []).append(name)
        for acct in extra:
            assoc_dels.setdefault(acct, []).append(name)
        if missing or extra:
            changes['accounts'] = wanted_accounts
        info_changes = _changed(info, current_info)
        # the default account is one per cluster: changed only on this one (the admin level is global)
        for scope, fields in (('user', [f for f in info_changes if f != 'default_account']),
                              ('cluster', [f for f in info_changes if f == 'default_account'])):
            if fields:
                clause = set_clause(USER_FIELDS, dict((f, info_changes[f]) for f in fields))
                user_mods.setdefault((scope, tuple(clause)), []).append(name)
        changes.update(info_changes)
        # association fields on the associations the user keeps
        kept = [a for a in wanted_accounts if a in mine]
        assoc_changes = {}
        for acct in kept:
            assoc_changes.update(_changed(assoc, mine[acct]))
        if assoc_changes:
            assoc_mods.setdefault(tuple(set_clause(ASSOC_FIELDS, assoc_changes, mine[kept[0]])), []).append(name)
            changes.update(assoc_changes)
        if changes:
            before = dict(current_info, accounts=sorted(mine))
            for f in assoc_changes:
                before[f] = mine[kept[0]].get(f)
            plan.modified('user', name, changes, before)
    if purge:
        plan.purge('user', sorted(set(user for (acct, user) in state['assocs'] if user)),
                   set(u['name'] for u in users), PROTECTED_USERS,
                   lambda name: dict(accounts=sorted(a for (a, us) in state['assocs'] if us == name)))
    plan.batch(adds, lambda names, key: (['add', 'user', 'name=' + names] + where +
                                         ['account=' + ','.join(key[0])] + list(key[2])))
    plan.batch(assoc_adds, lambda names, key: (['add', 'user', 'name=' + names] + where +
                                               ['account=' + ','.join(key[0])] + list(key[1])))
    plan.batch(user_mods, lambda names, key: (['modify', 'user', 'where', 'name=' + names] +
                                              (where if key[0] == 'cluster' else []) + ['set'] + list(key[1])))
    plan.batch(assoc_mods, lambda names, key: ['modify', 'user', 'where', 'name=' + names] + where +
               ['set'] + list(key))
    plan.batch(assoc_dels, lambda names, acct: ['delete', 'user', 'where', 'name=' + names, 'account=' + acct] +
               where)
    plan.removals('user')


def _names(entities, kind, keep_case=False):
    """The entities with their names as Slurm stores them; two that Slurm would
    store as one are refused."""
    out, seen = [], {}
    for index, entity in enumerate(entities or []):
        name = entity_name('%s[%d] name' % (kind, index), entity.get('name'), keep_case)
        if name in seen:
            hint = '' if keep_case or kind != 'users' else (
                ' (Slurm lower-cases user names unless slurmdbd.conf has Parameters=PreserveCaseUser)')
            raise SacctmgrError('duplicate', '%s[%d] %r and %s[%d] %r are the same Slurm %s %r%s'
                                % (kind, seen[name][0], seen[name][1], kind, index, entity.get('name'),
                                   kind.rstrip('s'), name, hint), 'list it once')
        seen[name] = (index, entity.get('name'))
        out.append(dict(entity, name=name))
    return out


def plan_all(state, qos=None, accounts=None, users=None, purge=False, preserve_case_user=False):
    """The whole change: QoS, then accounts (parents first), then users; removals in reverse.

    Names are compared as Slurm stores them: QoS and account names in lower
    case, user names too unless preserve_case_user (PreserveCaseUser).
    """
    plan = Plan()
    qos = _names(qos, 'qos')
    accounts = [dict(a, parent=entity_name('account %s parent' % a['name'], a['parent']) if a.get('parent') else None)
                for a in _names(accounts, 'accounts')]
    users = [dict(u, default_account=entity_name('user %s default_account' % u['name'], u['default_account'])
                  if u.get('default_account') else None,
                  accounts=[entity_name('user %s accounts' % u['name'], x) for x in u['accounts']]
                  if u.get('accounts') is not None else None)
             for u in _names(users, 'users', preserve_case_user)]
    present_qos = set(q['name'] for q in qos if q.get('state', 'present') == 'present')
    present_accounts = set(a['name'] for a in accounts if a.get('state', 'present') == 'present')
    # only the kinds given are managed (and purged)
    if qos:
        plan_qos(plan, state, qos, purge)
    if accounts:
        plan_accounts(plan, state, accounts, purge, present_qos)
    if users:
        plan_users(plan, state, users, purge, present_qos, present_accounts)
    plan.deletions(['cluster=' + state['cluster']] if state['cluster'] else [])
    return plan
