import pytest
from ansible_collections.gpuhpc.slurm.plugins.filter.node_exporter import FilterModule, node_exporter_problems

KNOWN = ['cpu', 'systemd', 'textfile', 'tcpstat', 'wifi']
ALWAYS_ON = ['systemd', 'textfile']
MANAGED = {'--web.listen-address': 'node_exporter_listen_address'}
GOOD = dict(listen_address='0.0.0.0:9100', textfile_dir='/var/lib/node_exporter',
            collectors_enabled=['systemd'], collectors_disabled=['wifi'], extra_args=['--log.level=warn'])


def problems(**changes):
    return node_exporter_problems(dict(GOOD, **changes), KNOWN, ALWAYS_ON, MANAGED)


def test_good_input_has_no_problem():
    assert problems() == []
    assert problems(listen_address='[::]:9100') == []


@pytest.mark.parametrize('changes, message', [
    (dict(listen_address='0.0.0.0'), "node_exporter_listen_address '0.0.0.0' is not ADDRESS:PORT"),
    (dict(listen_address='0.0.0.0:0'), "with a port from 1 to 65535"),
    (dict(textfile_dir='textfiles'), "node_exporter_textfile_dir 'textfiles' is not an absolute path"),
    (dict(collectors_enabled=['gpu']),
     "node_exporter_collectors_enabled names 'gpu', which node_exporter does not have; known collectors: cpu, systemd"),
    (dict(collectors_enabled=['tcpstat'], collectors_disabled=['tcpstat']), "both name 'tcpstat'"),
    (dict(collectors_enabled=[], collectors_disabled=['systemd']), "node_exporter_collectors_disabled names 'systemd': the role always runs"),
    (dict(extra_args=['collector.wifi']), "'collector.wifi' is not a flag"),
    (dict(extra_args=['--web.listen-address=:9200']),
     "sets --web.listen-address, which the role sets from node_exporter_listen_address: use that instead"),
    (dict(extra_args=['--no-collector.wifi']), "'--no-collector.wifi' switches a collector"),
])
def test_each_problem_names_the_variable_and_the_fix(changes, message):
    found = problems(**changes)
    assert len(found) == 1 and message in found[0], found


def test_every_problem_is_reported_at_once():
    assert len(problems(listen_address='x', textfile_dir='y', extra_args=['z'])) == 3


def test_registered():
    assert list(FilterModule().filters()) == ['node_exporter_problems']
