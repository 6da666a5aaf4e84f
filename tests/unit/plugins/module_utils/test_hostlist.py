from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils.hostlist import HostlistError, compress, expand


@pytest.mark.parametrize('hosts, expr', [
    (['gpu-%02d' % i for i in range(1, 13)], 'gpu-[01-12]'),
    (['gpu-01', 'gpu-02', 'gpu-03', 'gpu-07'], 'gpu-[01-03,07]'),
    (['node9', 'node10', 'node11'], 'node[9-11]'),
    (['gpu-09', 'gpu-10'], 'gpu-[09-10]'),
    (['login'], 'login'),
    (['gpu-01'], 'gpu-01'),
    (['a1.example', 'a2.example'], 'a[1-2].example'),
    (['gpu-02', 'gpu-01', 'login', 'gpu-03'], 'gpu-[01-03],login'),
    (['n001', 'n1'], 'n001,n1'),
])
def test_compress(hosts, expr):
    assert compress(hosts) == expr


@pytest.mark.parametrize('expr, hosts', [
    ('gpu-[01-03,07]', ['gpu-01', 'gpu-02', 'gpu-03', 'gpu-07']),
    ('node[9-11]', ['node9', 'node10', 'node11']),
    ('login,gpu-[1-2]', ['login', 'gpu-1', 'gpu-2']),
    ('r[1-2]n[01-02]', ['r1n01', 'r1n02', 'r2n01', 'r2n02']),
    ('/dev/nvidia[0-3]', ['/dev/nvidia0', '/dev/nvidia1', '/dev/nvidia2', '/dev/nvidia3']),
    (['a[1-2]', 'b'], ['a1', 'a2', 'b']),
    ('x,x', ['x']),
])
def test_expand(expr, hosts):
    assert expand(expr) == hosts


def test_round_trip_of_a_thousand_nodes():
    hosts = ['gpu%04d' % i for i in range(1, 1001)]
    assert compress(hosts) == 'gpu[0001-1000]'
    assert expand(compress(hosts)) == hosts


@pytest.mark.parametrize('expr, message', [
    ('gpu-[01-03', "unbalanced '['"),
    ('gpu-01]', "unbalanced ']'"),
    ('gpu-[03-01]', 'goes backwards'),
    ('gpu-[a-b]', 'not numeric'),
    ('gpu-[[1-2]]', "nested '['"),
])
def test_bad_hostlists(expr, message):
    with pytest.raises(HostlistError, match=message.replace('[', r'\[').replace(']', r'\]')):
        expand(expr)
