# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm node states, from ``scontrol show node -o``, and what draining or
resuming them takes (module gpuhpc.slurm.slurm_node_state).

A node's ``State=`` is a base state and flags joined by ``+``
(``ALLOCATED+DRAIN``, ``IDLE+DRAIN``, ``DOWN+DRAIN+NOT_RESPONDING``). A node
is drained once it has the DRAIN flag and no job is left on it (its base is
IDLE or DOWN and it is not COMPLETING), or once it is DOWN: Slurm runs no
job on a DOWN node. A node that is DOWN or has the DRAIN flag is out of
service already, by a person or by Slurm, and a drain leaves it as it is. ``Reason=`` is the last field of the
line and may hold spaces.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NAME = re.compile(r'^NodeName=(\S+)')
_STATE = re.compile(r'\sState=(\S+)')
_GRES = re.compile(r'\sGres=(\S+)')
_GPU = re.compile(r'^gpu(?::([^:(]+))?:(\d+)')
_REASON = re.compile(r'\sReason=(.*)$')
_REASON_STAMP = re.compile(r'\s*\[([^\]@]*)@[^\]]*\]$')
# What slurmctld writes as the reason when it drains a node that registers with
# less than its slurm.conf line says (validate_node_specs, gres' node config
# validation; Slurm 22.05 to 24.11), the first of them where there are several.
_REGISTRATION_REASON = re.compile(r'^(Low (socket\*core\*thread count|CPUs|RealMemory|TmpDisk)'
                                  r'|\S+ count too low|\S+ count reported lower than configured|CoreSpec differ)')

# Base states with no job on the node.
_FREE = ('IDLE', 'DOWN', 'FUTURE')


def gres_gpus(gres):
    """(type, count) of the GPUs in a node's Gres as scontrol shows it
    (``gpu:a100:2(S:0-1)``, ``gpu:2``, ``(null)``); several types: ('', sum)."""
    found = [m for m in (_GPU.match(item) for item in (gres or '').split(',')) if m]
    types = set(m.group(1) or '' for m in found)
    return (types.pop() if len(types) == 1 else '', sum(int(m.group(2)) for m in found))


def parse(text):
    """``{name: {'base', 'flags', 'reason', 'reason_user', 'gpus'}}`` from ``scontrol show node -o``.

    ``reason_user`` is who set the reason (``slurm`` where slurmctld did).

    ``gpus`` is the number of GPUs Slurm configures on the node (its Gres).
    """
    nodes = {}
    for line in (text or '').splitlines():
        name = _NAME.match(line)
        if not name:
            continue
        state = _STATE.search(line)
        parts = (state.group(1) if state else 'UNKNOWN').split('+')
        reason = _REASON.search(line)
        stamp = _REASON_STAMP.search(reason.group(1)) if reason else None
        text_reason = _REASON_STAMP.sub('', reason.group(1)).strip() if reason else ''
        gres = _GRES.search(line)
        nodes[name.group(1)] = dict(base=parts[0], flags=parts[1:],
                                    reason='' if text_reason in ('(null)', 'None') else text_reason,
                                    reason_user=stamp.group(1) if stamp else '',
                                    gpus=gres_gpus(gres.group(1) if gres else '')[1])
    return nodes


def state_text(node):
    """``ALLOCATED+DRAIN`` as scontrol wrote it."""
    return '+'.join([node['base']] + node['flags'])


def draining(node):
    return 'DRAIN' in node['flags']


def out_of_service(node):
    """Taken out already, by a person or by Slurm: the DRAIN flag, or DOWN."""
    return draining(node) or node['base'] == 'DOWN'


def drained(node):
    """No job left, and none will start: drained, or DOWN."""
    if 'COMPLETING' in node['flags']:
        return False
    return node['base'] == 'DOWN' or (draining(node) and node['base'] in _FREE)


def in_service(node):
    """Resumed and answering: no DRAIN, not DOWN, not NOT_RESPONDING."""
    return not draining(node) and node['base'] != 'DOWN' and 'NOT_RESPONDING' not in node['flags']


def missing(nodes, names):
    return [n for n in names if n not in nodes]


def to_drain(nodes, names):
    """The names in service: a node drained or DOWN already, for any reason, is left as it is (so
    that whoever resumes only what it drained never brings back a node a person took out)."""
    return [n for n in names if not out_of_service(nodes[n])]


def to_resume(nodes, names):
    """The names that are drained, draining or down."""
    return [n for n in names if draining(nodes[n]) or nodes[n]['base'] == 'DOWN']


def registering(node):
    """slurmctld's last registration from the node fell short of its line
    (INVALID_REG)."""
    return 'INVALID_REG' in node['flags']


def registration_reason(reason, user, slurm_user):
    """Whether a node's reason is slurmctld's own, set when the node
    registered with less than its line says."""
    return user == slurm_user and bool(_REGISTRATION_REASON.match(reason or ''))


def drained_at_registration(node, slurm_user):
    """Drained by slurmctld (the reason's user is ``slurm_user``) because the
    node registered with less than its line says, and registered right since:
    what a change of the line leaves behind when slurmctld applies it before
    the node's slurmd does (a GPU or memory added)."""
    return (draining(node) and not registering(node)
            and registration_reason(node['reason'], node.get('reason_user'), slurm_user))


def to_release(nodes, names, slurm_user, keep=()):
    """The names that slurmctld drained at a registration that the node's
    line has since made right (drained_at_registration), but those of
    ``keep`` (taken out by a person before: Slurm 23.11 and later put their
    own reason over a person's at such a registration)."""
    return [n for n in names if n not in keep and drained_at_registration(nodes[n], slurm_user)]


def not_done(nodes, names, state):
    """The names not yet in ``state`` (``drained``: no job left; ``resumed``:
    in service; ``registered``: registered with its line)."""
    if state == 'registered':
        return [n for n in names if registering(nodes[n])]
    done = drained if state == 'drained' else in_service
    return [n for n in names if not done(nodes[n])]


_SMI_GPU = re.compile(r'^GPU \d+: ')
_SMI_MIG = re.compile(r'^\s+MIG \S+\s+Device\s+\d+: ')
_DEV_GPU = re.compile(r'^/dev/nvidia\d+$')


def gpus_visible(text):
    """How many GPUs Slurm can schedule on a node, as the node shows them:
    ``nvidia-smi -L`` (a GPU in MIG mode counts its MIG devices, each a GPU
    for Slurm; one without MIG devices counts once), or a list of
    ``/dev/nvidiaN`` files where there is no nvidia-smi."""
    migs = []  # per GPU seen, its MIG devices
    for line in (text or '').splitlines():
        if _SMI_GPU.match(line) or _DEV_GPU.match(line.strip()):
            migs.append(0)
        elif _SMI_MIG.match(line) and migs:
            migs[-1] += 1
    return sum(max(n, 1) for n in migs)
