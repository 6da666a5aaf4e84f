"""installed: the packages fact from dpkg-query (output captured on the lab's Debian hosts) and rpm."""
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
