# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm accounting (QoS, accounts, users) through sacctmgr, declaratively:
the part the sacctmgr_* modules share (their options, and read, plan,
apply, exit).

The work is done in four parts, each its own module_utils:
sacctmgr_run (running sacctmgr, its error texts as codes, apply()),
sacctmgr_values (the fields and their values normalised),
sacctmgr_read (read_state(): everything a plan needs in at most six
invocations) and sacctmgr_plan (plan_all(): the few batched commands that
make the difference, in a safe order).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_plan import plan_all
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_read import facts, preserve_case_user, read_state
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import Runner, SacctmgrError, apply

STATE = dict(type='str', default='present', choices=['present', 'absent'])
ASSOC_OPTIONS = dict(
    fairshare=dict(type='raw'),
    qos=dict(type='list', elements='str'),
    default_qos=dict(type='str'),
    grp_tres=dict(type='raw'),
    grp_jobs=dict(type='int'),
    grp_submit_jobs=dict(type='int'),
    max_tres_per_job=dict(type='raw'),
    max_jobs=dict(type='int'),
    max_submit_jobs=dict(type='int'),
    max_wall=dict(type='raw'),
)
QOS_OPTIONS = dict(
    name=dict(type='str'),
    state=STATE,
    description=dict(type='str'),
    priority=dict(type='int'),
    flags=dict(type='list', elements='str'),
    usage_factor=dict(type='float'),
    grp_tres=dict(type='raw'),
    grp_jobs=dict(type='int'),
    max_tres_per_user=dict(type='raw'),
    max_tres_per_job=dict(type='raw'),
    max_jobs_per_user=dict(type='int'),
    max_submit_jobs_per_user=dict(type='int'),
    max_wall=dict(type='raw'),
    preempt=dict(type='list', elements='str'),
)
ACCOUNT_OPTIONS = dict(ASSOC_OPTIONS, name=dict(type='str'), state=STATE, parent=dict(type='str'),
                       description=dict(type='str'), organization=dict(type='str'))
USER_OPTIONS = dict(ASSOC_OPTIONS, name=dict(type='str'), state=STATE, default_account=dict(type='str'),
                    accounts=dict(type='list', elements='str'),
                    admin_level=dict(type='str', choices=['none', 'operator', 'administrator']))
COMMON_OPTIONS = dict(
    purge=dict(type='bool', default=False),
    preserve_case_user=dict(type='bool'),
    slurmdbd_conf=dict(type='path', default='/etc/slurm/slurmdbd.conf'),
    cluster=dict(type='str'),
    timeout=dict(type='int', default=60),
)
INFO_OPTIONS = dict(cluster=dict(type='str'), timeout=dict(type='int', default=60))


def entities(module, list_key, spec):
    """The list option's items, each checked against the entity spec (name required)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    item_spec = dict(spec, name=dict(type='str', required=True))
    validator = ArgumentSpecValidator(item_spec)
    out = []
    for index, item in enumerate(module.params.get(list_key) or []):
        result = validator.validate(item)
        if result.error_messages:
            module.fail_json(msg='%s[%d] (%s): %s'
                             % (list_key, index, item.get('name', '?'), '; '.join(result.error_messages)))
        out.append(result.validated_parameters)
    return out


def single(module, spec):
    """The top-level options as one entity, when name is given."""
    if not module.params.get('name'):
        return []
    return [dict((k, module.params.get(k)) for k in spec)]


def make_runner(module):
    """A Runner of the target's sacctmgr, with the module's timeout."""
    return Runner(module.get_bin_path('sacctmgr', required=True), module.params['timeout'])


def fail(module, error, runner, **extra):
    """Fail the module with a SacctmgrError: message and fix, code, invocations."""
    extra['sacctmgr_calls'] = runner.calls
    module.fail_json(msg='%s (fix: %s)' % (error.message, error.fix), code=error.code, **extra)


def run(module, qos=None, accounts=None, users=None):
    """Read, plan, apply (not in check mode) and exit the module."""
    p = module.params
    runner = make_runner(module)
    kinds = [k for k, v in (('qos', qos), ('accounts', accounts), ('users', users)) if v is not None]
    wanted = (qos or []) + (accounts or []) + (users or [])
    need_tres = any(e.get(f) is not None for e in wanted
                    for f in ('grp_tres', 'max_tres_per_user', 'max_tres_per_job'))
    try:
        state = read_state(runner, p.get('cluster'), kinds, need_tres, need_qos_use=bool(p['purge'] and qos))
        keep_case = p.get('preserve_case_user')
        if keep_case is None:
            keep_case = preserve_case_user(p['slurmdbd_conf'])
        plan = plan_all(state, qos, accounts, users, p['purge'], keep_case)
        commands = [' '.join(args) for args, dummy in plan.steps]
        if not module.check_mode:
            apply(runner, plan)
    except SacctmgrError as e:
        fail(module, e, runner, applied=e.applied, not_applied=e.not_applied)
    result = dict(changed=bool(plan.steps), changes=plan.changes, commands=commands,
                  sacctmgr_calls=runner.calls, cluster=state['cluster'])
    if module._diff and plan.steps:
        result['diff'] = dict(before=plan.before, after=plan.after)
    module.exit_json(**result)


def info(module):
    """Read everything (INFO_OPTIONS) and exit the module with it as facts()."""
    runner = make_runner(module)
    try:
        state = read_state(runner, module.params['cluster'])
    except SacctmgrError as e:
        fail(module, e, runner)
    module.exit_json(changed=False, sacctmgr_calls=runner.calls, **facts(state))
