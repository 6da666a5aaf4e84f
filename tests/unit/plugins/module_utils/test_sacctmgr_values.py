"""sacctmgr values: normalising what the modules are given and what sacctmgr shows."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_values as sv
from ansible_collections.gpuhpc.slurm.plugins.module_utils.sacctmgr_run import SacctmgrError


@pytest.mark.parametrize('a, b', [
    ('mem=65536M', 'mem=64G'),
    ('gres/gpu=2,cpu=8', 'cpu=8,gres/gpu=2'),
    ({'gres/gpu': 2, 'cpu': '8'}, 'cpu=8,gres/gpu=2'),
    ('mem=1T', {'mem': '1024G'}),
    ('gres/gpu=-1', ''),
    ('GRES/GPU=4', 'gres/gpu=4'),
])
def test_tres_equal(a, b):
    assert sv.norm_tres(a) == sv.norm_tres(b)


@pytest.mark.parametrize('a, minutes', [
    ('2-00:00:00', 2880), ('48:00:00', 2880), (2880, 2880), ('2880', 2880), ('1-12', 2160),
    ('30:00', 30), ('04:00:00', 240), ('UNLIMITED', -1), ('-1', -1), ('', -1),
])
def test_durations(a, minutes):
    assert sv.norm_duration(a) == minutes


def test_duration_text_round_trip():
    assert sv.norm_duration(sv.duration_text(2161)) == 2161


@pytest.mark.parametrize('value', ['a|b', 'two\nlines'])
def test_pipe_and_newline_refused(value):
    with pytest.raises(SacctmgrError) as err:
        sv.normalise('str', value, 'account x description')
    assert err.value.code == 'bad_value'
    assert 'account x description' in err.value.message


def test_bad_tres():
    with pytest.raises(SacctmgrError, match="gres/gpu=lots is not a count"):
        sv.norm_tres('gres/gpu=lots', 'qos q grp_tres')
