#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: slurm_node_state
short_description: Drain Slurm nodes and wait until their jobs end, or resume them
version_added: 0.1.0
description:
  - With O(state=drained), sets the DRAIN flag on the nodes that do not have
    it (C(scontrol update State=DRAIN Reason=...)), then waits until no job is
    left on any of them, or requeues their jobs first with O(requeue=true).
  - A node that is out of service already, with the DRAIN flag or DOWN (set
    down by an admin, or by Slurm), for whatever reason, is left as it is and
    not listed in RV(changed_nodes); resume only those nodes, so that a node
    someone else took out stays out. A DOWN node counts as drained (Slurm runs
    no job on it).
  - With O(state=resumed), resumes the nodes that are drained, draining or down
    (C(scontrol update State=RESUME)) and waits until they answer.
  - With O(state=registered), for nodes whose slurm.conf line just changed
    (a GPU or memory added), waits until each has registered with its line
    (no C(INVALID_REG)), then resumes those that slurmctld drained because
    they registered with less than the line says (their reason is
    C(Low RealMemory ...), C(Low CPUs) or C(gres/gpu count too low ...), set
    by O(slurm_user)). slurmctld applies a new line at its restart, before
    the node's slurmd has it. A node drained or set down by a person, or for
    another reason, stays as it is, and so does each node of O(keep). A node
    still registering with less than its line after O(timeout) fails the
    module, with Slurm's reason.
  - The state is read with C(scontrol show node -o) (its C(State=) base state
    and flags). Run it where the Slurm client commands work as root or as
    SlurmUser, e.g. the first controller.
  - In check mode, tells which nodes would change, and changes and waits for
    nothing.
  - Each C(scontrol) and C(squeue) call is given 60 seconds. One that does not
    finish in that time (slurmctld does not answer) is killed and the module
    fails with a message that names the command and a C(fix) to check
    slurmctld; what earlier calls did stays done (nodes already drained stay
    drained, and a rerun leaves them out of RV(changed_nodes)).
author:
  - gpuhpc.slurm maintainers (@gpuhpc)
requirements:
  - scontrol and squeue on the target.
options:
  nodes:
    description: Slurm node names or hostlist expressions (C(gpu-[01-04])).
    type: list
    elements: str
    required: true
  state:
    description: C(drained) (no job left on them), C(resumed) (in service) or C(registered) (registered with their line).
    type: str
    required: true
    choices: [drained, resumed, registered]
  reason:
    description: Why the nodes are drained (Slurm's Reason); required with O(state=drained).
    type: str
  timeout:
    description:
      - Seconds to wait for O(state); C(0) waits for nothing (a node may still be draining).
      - On a timeout the module fails and names the nodes and jobs left; drained nodes stay drained.
    type: int
    default: 3600
  slurm_user:
    description: SlurmUser, whose name slurmctld puts on the reasons it sets (O(state=registered)).
    type: str
    default: slurm
  keep:
    description:
      - With O(state=registered), nodes never resumed, whatever their reason now; give those taken out by a
        person before the change (Slurm 23.11 and later replace a person's reason with their own when the node
        registers short of its line).
    type: list
    elements: str
    default: []
  requeue:
    description:
      - Requeue the running and suspended jobs of the nodes (C(scontrol requeue)) instead of
        waiting for them to end. Only batch jobs can be requeued; the module fails on the others.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Drain gpu-07 and wait up to 2 hours for its jobs
  gpuhpc.slurm.slurm_node_state:
    nodes: [gpu-07]
    state: drained
    reason: replace GPU 3
    timeout: 7200
  delegate_to: "{{ groups['slurm_controller'][0] }}"
  register: drain

- name: Resume what this play drained
  gpuhpc.slurm.slurm_node_state:
    nodes: "{{ drain.changed_nodes }}"
    state: resumed
  delegate_to: "{{ groups['slurm_controller'][0] }}"
'''

RETURN = r'''
changed_nodes:
  description: The nodes this call drained (or resumed); the others were in that state already.
  returned: always
  type: list
  elements: str
  sample: [gpu-07]
nodes:
  description: Each node's C(State=) when the module ended.
  returned: always
  type: dict
  sample: {gpu-07: IDLE+DRAIN}
gpus:
  description: The GPUs Slurm configures on each node (its Gres), for a health check after work on it.
  returned: always
  type: dict
  sample: {gpu-07: 8}
requeued:
  description: The job ids requeued (O(requeue=true)).
  returned: always
  type: list
  elements: str
  sample: ["4127"]
waited:
  description: Seconds spent waiting for O(state).
  returned: always
  type: float
  sample: 42.0
'''

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuhpc.slurm.plugins.module_utils import hostlist, nodestate
from ansible_collections.gpuhpc.slurm.plugins.module_utils.command import CommandError, check

POLL_SECONDS = 2
# Seconds each scontrol/squeue call may take before it is killed (slurmctld not answering).
COMMAND_TIMEOUT = 60


class Slurm(object):
    def __init__(self, module):
        self.module = module
        self.scontrol = module.get_bin_path('scontrol', required=True)
        self.squeue = module.get_bin_path('squeue', required=True)

    def run(self, argv, what):
        try:
            out = check(argv, COMMAND_TIMEOUT, what)
        except CommandError as e:
            if e.code == 'timeout':
                self.module.fail_json(msg=e.message, argv=argv,
                                      fix='check that slurmctld runs and answers (scontrol ping, systemctl status '
                                          'slurmctld), then run again')
            self.module.fail_json(msg=e.message, argv=argv)
        return out

    def show(self, names):
        return nodestate.parse(self.run([self.scontrol, 'show', 'node', '-o', hostlist.compress(names)],
                                        'scontrol show node'))

    def jobs(self, names, states='RUNNING,SUSPENDED'):
        out = self.run([self.squeue, '-h', '-t', states, '-w', hostlist.compress(names), '-o', '%A %u %N'],
                       'squeue')
        return [line.split() for line in out.splitlines() if line.strip()]


def registered(module, slurm, names, nodes):
    """state=registered: wait for each node's registration, then resume the
    nodes slurmctld drained at a registration short of their line."""
    p = module.params
    user = p['slurm_user']
    keep = set(p['keep'])
    if module.check_mode:
        release = nodestate.to_release(nodes, names, user, keep)
        module.exit_json(changed=bool(release), changed_nodes=release, requeued=[], waited=0.0,
                         nodes=dict((n, nodestate.state_text(nodes[n])) for n in names),
                         gpus=dict((n, nodes[n]['gpus']) for n in names))
    started = time.time()
    while True:
        left = nodestate.not_done(nodes, names, 'registered')
        if not left or time.time() - started >= p['timeout']:
            break
        time.sleep(POLL_SECONDS)
        nodes = slurm.show(names)
    release = nodestate.to_release(nodes, names, user, keep)
    if release:
        slurm.run([slurm.scontrol, 'update', 'NodeName=%s' % hostlist.compress(release), 'State=RESUME'],
                  'scontrol update State=RESUME')
        while nodestate.not_done(nodes, release, 'resumed') and time.time() - started < p['timeout']:
            time.sleep(POLL_SECONDS)
            nodes = slurm.show(names)
    result = dict(changed=bool(release), changed_nodes=release, requeued=[],
                  waited=round(time.time() - started, 1),
                  nodes=dict((n, nodestate.state_text(nodes[n])) for n in names),
                  gpus=dict((n, nodes[n]['gpus']) for n in names))
    if left:
        module.fail_json(msg='after %ss, %s have not registered with their slurm.conf line: %s'
                         % (p['timeout'], ', '.join(left),
                            '; '.join('%s %s (%s)' % (n, result['nodes'][n], nodes[n]['reason'] or 'no reason')
                                      for n in left)),
                         fix='compare the node\'s hardware with its inventory (slurm_node_gpus, memory, CPUs) '
                             'and with slurmd -C on it; check slurmd there (systemctl status slurmd, slurmd.log)',
                         **result)
    module.exit_json(**result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nodes=dict(type='list', elements='str', required=True),
            state=dict(type='str', required=True, choices=['drained', 'resumed', 'registered']),
            slurm_user=dict(type='str', default='slurm'),
            keep=dict(type='list', elements='str', default=[]),
            reason=dict(type='str'),
            timeout=dict(type='int', default=3600),
            requeue=dict(type='bool', default=False),
        ),
        required_if=[('state', 'drained', ['reason'])],
        supports_check_mode=True,
    )
    p = module.params
    names = []
    try:
        for item in p['nodes']:
            names += [n for n in hostlist.expand(item) if n not in names]
    except hostlist.HostlistError as e:
        module.fail_json(msg='nodes: %s' % e)
    if not names:
        module.exit_json(changed=False, changed_nodes=[], nodes={}, gpus={}, requeued=[], waited=0.0)
    if p['state'] == 'drained' and not (p['reason'] or '').strip():
        module.fail_json(msg='reason is empty: say why the nodes are drained (Slurm requires a reason)')
    if p['timeout'] < 0:
        module.fail_json(msg='timeout is %s: give seconds, or 0 to wait for nothing' % p['timeout'])

    slurm = Slurm(module)
    nodes = slurm.show(names)
    unknown = nodestate.missing(nodes, names)
    if unknown:
        module.fail_json(msg='Slurm has no node %s: give Slurm node names (sinfo -N)' % ', '.join(unknown))

    target = p['state']
    if target == 'registered':
        registered(module, slurm, names, nodes)
    change = nodestate.to_drain(nodes, names) if target == 'drained' else nodestate.to_resume(nodes, names)
    result = dict(changed=bool(change), changed_nodes=change, requeued=[], waited=0.0)
    if module.check_mode:
        module.exit_json(nodes=dict((n, nodestate.state_text(nodes[n])) for n in names),
                         gpus=dict((n, nodes[n]['gpus']) for n in names), **result)

    if change:
        update = ['State=DRAIN', 'Reason=%s' % p['reason'].strip()] if target == 'drained' else ['State=RESUME']
        slurm.run([slurm.scontrol, 'update', 'NodeName=%s' % hostlist.compress(change)] + update,
                  'scontrol update State=%s' % ('DRAIN' if target == 'drained' else 'RESUME'))
    if target == 'drained' and p['requeue']:
        ids = sorted(set(job[0] for job in slurm.jobs(names)), key=lambda x: (len(x), x))
        if ids:
            slurm.run([slurm.scontrol, 'requeue', ','.join(ids)], 'scontrol requeue %s' % ','.join(ids))
            result['requeued'] = ids
            result['changed'] = True

    started = time.time()
    while True:
        nodes = slurm.show(names)
        left = nodestate.not_done(nodes, names, target) if p['timeout'] else []
        if not left or time.time() - started >= p['timeout']:
            break
        time.sleep(POLL_SECONDS)
    result['waited'] = round(time.time() - started, 1) if p['timeout'] else 0.0
    result['nodes'] = dict((n, nodestate.state_text(nodes[n])) for n in names)
    result['gpus'] = dict((n, nodes[n]['gpus']) for n in names)
    if left:
        if target == 'drained':
            jobs = ['%s (%s on %s)' % tuple(job[:3]) for job in slurm.jobs(left, 'RUNNING,SUSPENDED,COMPLETING')]
            module.fail_json(msg='after %ss, %s still run jobs: %s; the nodes stay drained'
                             % (p['timeout'], ', '.join(left), ', '.join(jobs) or 'none left now'),
                             fix='raise timeout, requeue them (requeue: true), or end them (scancel)', **result)
        module.fail_json(msg='after %ss, %s are not in service: %s'
                         % (p['timeout'], ', '.join(left), ', '.join('%s %s' % (n, result['nodes'][n]) for n in left)),
                         fix='check slurmd on them (systemctl status slurmd, slurmd.log) and scontrol show node',
                         **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
