"""installed: the packages fact from dpkg-query (output captured on the lab's Debian hosts) and rpm."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpuhpc.slurm.plugins.module_utils import installed

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'installed')


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def test_dpkg_gives_what_package_facts_gave_on_the_same_host():
    """A Debian 13 GPU node of the lab: dpkg-query and ansible.builtin.package_facts (apt manager),
    captured on the same host one after the other, list the same packages, versions and architectures."""
    ours = installed.parse_dpkg(fixture('dpkg-trixie-gpu-node.txt'))
    theirs = json.loads(fixture('package_facts-trixie-gpu-node.json'))
    assert {n: [{k: p[k] for k in ('name', 'version', 'arch')} for p in v] for n, v in ours.items()} == theirs
    assert {p['source'] for v in ours.values() for p in v} == {'apt'}
    assert ours['munge'][0]['version'].startswith('0.5.')


def test_a_removed_package_with_its_config_files_left_is_not_installed():
    """Debian 12, after dpkg -r iproute2: status 'rc'."""
    ours = installed.parse_dpkg(fixture('dpkg-bookworm-removed-iproute2.txt'))
    assert 'iproute2' not in ours
    assert 'dpkg' in ours and len(ours) == 160


def test_dpkg_states_not_installed_and_half_installed():
    text = ('un\tgone\t\t\n'
            'iF\thalf-configured\t1.0-1\tamd64\n'
            'pn\tpurged\t\t\n'
            'ii\tlibfoo\t2:1.0-1\tamd64\n'
            'ii\tlibfoo\t2:1.0-1\ti386\n'
            'garbage line\n')
    ours = installed.parse_dpkg(text)
    assert sorted(ours) == ['half-configured', 'libfoo']
    assert [p['arch'] for p in ours['libfoo']] == ['amd64', 'i386']
    assert ours['libfoo'][0]['version'] == '2:1.0-1'


def test_rpm_epoch_and_release_as_package_facts_has_them():
    text = ('munge\t(none)\t0.5.13\t13.el9\tx86_64\n'
            'slurm\t0\t24.11.5\t1.el9\tx86_64\n'
            'short line\n')
    ours = installed.parse_rpm(text)
    assert ours['munge'] == [{'name': 'munge', 'version': '0.5.13', 'release': '13.el9', 'epoch': None,
                              'arch': 'x86_64', 'source': 'rpm'}]
    assert ours['slurm'][0]['epoch'] == 0
    assert sorted(ours) == ['munge', 'slurm']


def test_services_as_service_facts_had_them_on_the_same_host():
    """systemctl list-units / list-unit-files and ansible.builtin.service_facts (its systemd units),
    captured on the same lab GPU node. Aliases differ: service_facts asks again for each."""
    ours = installed.parse_services(fixture('systemctl-units-trixie-gpu-node.txt'),
                                    fixture('systemctl-unit-files-trixie-gpu-node.txt'))
    theirs = json.loads(fixture('service_facts-trixie-gpu-node.json'))
    assert sorted(ours) == sorted(theirs)
    differ = [u for u in ours if ours[u] != theirs[u]]
    assert all(ours[u]['status'] == 'alias' for u in differ) and len(differ) <= 1
    assert ours['munge.service'] == {'name': 'munge.service', 'state': 'running', 'status': 'enabled', 'source': 'systemd'}


def test_a_failed_unit_and_a_unit_that_did_not_load():
    units = ('slurmd.service loaded failed failed Slurm node daemon\n'
             '\u25cf broken.service not-found inactive dead broken.service\n'
             'not-a-service.socket loaded active listening x\n')
    ours = installed.parse_services(units, 'slurmd.service enabled enabled\n')
    assert ours['slurmd.service']['state'] == 'failed'
    assert ours['broken.service'] == {'name': 'broken.service', 'state': 'stopped', 'status': 'not-found',
                                      'source': 'systemd'}
    assert 'not-a-service.socket' not in ours


def test_matching_keeps_what_the_globs_name():
    services = installed.parse_services(fixture('systemctl-units-trixie-gpu-node.txt'),
                                        fixture('systemctl-unit-files-trixie-gpu-node.txt'))
    assert sorted(installed.matching(services, ['munge', 'slurm*', 'prometheus*.service'])) == [
        'munge.service', 'prometheus-node-exporter.service', 'slurmd.service']
    packages = installed.parse_dpkg(fixture('dpkg-trixie-gpu-node.txt'))
    assert installed.matching(packages, ['*']) is packages
    kept = installed.matching(packages, ['munge', 'slurm*'])
    assert {'munge', 'slurmd', 'slurm-client'} <= set(kept)
    assert all(n == 'munge' or n.startswith('slurm') for n in kept)
    assert kept['munge'] == packages['munge']


SITE_SERVICES = ['munge', 'slurm*', 'prometheus*', 'node_exporter', 'grafana-server', 'gpuhpc-slurm-exporter',
                 'nvidia-dcgm*']


def test_unit_patterns_ask_systemd_for_what_matching_keeps():
    patterns = installed.unit_patterns(SITE_SERVICES + ['munge.service'])
    assert patterns[:3] == ['munge.service', 'slurm*.service', 'prometheus*.service']
    assert installed.unit_patterns(['munge', '*']) == []
    # systemctl given those patterns (captured on a lab GPU node) lists what
    # matching keeps of its whole lists (captured on the same kind of host)
    asked = installed.parse_services(fixture('systemctl-units-trixie-gpu-node-patterns.txt'),
                                     fixture('systemctl-unit-files-trixie-gpu-node-patterns.txt'))
    whole = installed.parse_services(fixture('systemctl-units-trixie-gpu-node.txt'),
                                     fixture('systemctl-unit-files-trixie-gpu-node.txt'))
    assert asked == installed.matching(whole, SITE_SERVICES)


def test_tcp_listening_is_what_ss_lists_on_the_same_host():
    ports = installed.parse_tcp_listening([fixture('proc-net-tcp-trixie-gpu-node.txt'),
                                           fixture('proc-net-tcp6-trixie-gpu-node.txt')])
    ss = sorted(set(int(line.split()[3].rsplit(':', 1)[1]) for line in fixture('ss-ltn-trixie-gpu-node.txt').splitlines()))
    assert ports == ss
    assert {6818, 9100} <= set(ports)
    assert installed.parse_tcp_listening(['', '']) == []
