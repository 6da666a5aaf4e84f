from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import nodestate

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'slurm_exporter')


def captured(version):
    """`scontrol show node -o` of real Slurm (the exporter's capture: gpu-02 drained under a job)."""
    with open(os.path.join(FIXTURES, '%s.json' % version)) as f:
        return json.load(f)['truth']['nodes']['stdout']


@pytest.mark.parametrize('version', ['22.05.8', '24.11.5'])
def test_captured_states(version):
    nodes = nodestate.parse(captured(version))
    assert sorted(nodes) == ['gpu-01', 'gpu-02']
    assert nodes['gpu-01'] == dict(base='ALLOCATED', flags=[], reason='', reason_user='', gpus=2)
    assert nodes['gpu-02'] == dict(base='ALLOCATED', flags=['DRAIN'], reason='capture', reason_user='root', gpus=2)
    assert nodestate.draining(nodes['gpu-02']) and not nodestate.drained(nodes['gpu-02'])
    assert nodestate.in_service(nodes['gpu-01']) and not nodestate.in_service(nodes['gpu-02'])
    assert nodestate.to_drain(nodes, ['gpu-01', 'gpu-02']) == ['gpu-01']
    assert nodestate.to_resume(nodes, ['gpu-01', 'gpu-02']) == ['gpu-02']
    assert nodestate.not_done(nodes, ['gpu-01', 'gpu-02'], 'drained') == ['gpu-01', 'gpu-02']


def with_state(version, state, reason='rolling restart [root@2026-12-02T01:00:00]'):
    line = captured(version).splitlines()[1]
    line = line.replace('State=ALLOCATED+DRAIN', 'State=' + state)
    return line[:line.index(' Reason=')] + (' Reason=' + reason if reason else '')


@pytest.mark.parametrize('state, drained, in_service', [
    ('IDLE+DRAIN', True, False),
    ('MIXED+DRAIN', False, False),
    ('IDLE+COMPLETING+DRAIN', False, False),
    ('DOWN+DRAIN+NOT_RESPONDING', True, False),
    ('IDLE', False, True),
    ('MIXED', False, True),
    ('IDLE+NOT_RESPONDING', False, False),
    ('DOWN+NOT_RESPONDING', True, False),
    ('DOWN', True, False),
    ('DOWN+COMPLETING', False, False),
])
def test_states(state, drained, in_service):
    node = nodestate.parse(with_state('24.11.5', state))['gpu-02']
    assert nodestate.state_text(node) == state
    assert nodestate.drained(node) is drained
    assert nodestate.in_service(node) is in_service


def test_reason_with_spaces_and_without_stamp():
    node = nodestate.parse(with_state('22.05.8', 'IDLE+DRAIN', 'replace GPU 3 [slurm@2026-12-02T01:00:00]'))['gpu-02']
    assert node['reason'] == 'replace GPU 3'
    assert nodestate.parse(with_state('22.05.8', 'IDLE', None))['gpu-02']['reason'] == ''


@pytest.mark.parametrize('state, reason', [('DOWN', 'GPU ECC'), ('DOWN+NOT_RESPONDING', 'Not responding'),
                                           ('IDLE+DRAIN', 'replace GPU 3'), ('DOWN+DRAIN', 'bad DIMM')])
def test_a_node_out_of_service_is_not_drained_again(state, reason):
    # a node an admin set DOWN with a reason, drained by a roll and resumed after it, came back in service
    nodes = nodestate.parse(with_state('24.11.5', state, reason))
    assert nodestate.to_drain(nodes, ['gpu-02']) == []
    assert nodestate.not_done(nodes, ['gpu-02'], 'drained') == []


def test_down_node_is_resumed():
    nodes = nodestate.parse(with_state('24.11.5', 'DOWN+NOT_RESPONDING', 'Not responding'))
    assert nodestate.to_resume(nodes, ['gpu-02']) == ['gpu-02']
    assert nodestate.missing(nodes, ['gpu-02', 'gpu-09']) == ['gpu-09']


@pytest.mark.parametrize('gres, gpus', [
    ('gpu:a100:2', 2), ('gpu:4', 4), ('gpu:a100:2(S:0-1)', 2), ('gpu:a100:2,gpu:v100:1', 3), ('(null)', 0),
    ('gpu:a100:4(S:0),shard:8', 4),
])
def test_gpus_of_a_node(gres, gpus):
    line = with_state('24.11.5', 'IDLE').replace('Gres=gpu:a100:2', 'Gres=' + gres)
    assert nodestate.parse(line)['gpu-02']['gpus'] == gpus


# nvidia-smi -L as NVIDIA's MIG user guide shows it: GPU 0 split in two MIG devices, GPU 1 whole
SMI_MIG = '''GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)
  MIG 3g.20gb     Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)
  MIG 3g.20gb     Device  1: (UUID: MIG-cba663e8-9bed-5b26-b243-5deb0e2ea0a0)
GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-4e5e4b2f-1d3c-6b5a-8c7d-2f1e0d9c8b7a)
'''


@pytest.mark.parametrize('text, gpus', [
    (SMI_MIG, 3),
    ('GPU 0: NVIDIA H200 (UUID: GPU-1)\nGPU 1: NVIDIA H200 (UUID: GPU-2)\n', 2),
    ('/dev/nvidia0\n/dev/nvidia1\n', 2),
    ('', 0),
    ('No devices were found\n', 0),
])
def test_gpus_visible_as_slurm_counts_them(text, gpus):
    # the roll compared `nvidia-smi -L | grep -c ^GPU` (2 here) with Slurm's count of MIG GPUs (3): always failed
    assert nodestate.gpus_visible(text) == gpus
