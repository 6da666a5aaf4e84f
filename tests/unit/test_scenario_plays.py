"""Every play of a molecule scenario's verify has a host to run on. A play
whose pattern matches no host (`hosts: monitoring[0]` on a shape with no
monitoring host) is skipped by Ansible, and the scenario passes having
checked nothing: the site shape's TLS test did so once. The hosts are listed
(`ansible-playbook --list-hosts`) with the scenario's inventories and every
inventory overlay its verify gives to its runs (molecule/<scenario>/*.yml
that are inventories)."""
import glob
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIOS = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, 'molecule', '*', 'molecule.yml')))


def inventories(scenario):
    """The scenario's own inventories (molecule.yml), then its overlays."""
    folder = os.path.join(ROOT, 'molecule', scenario)
    with open(os.path.join(folder, 'molecule.yml')) as f:
        args = yaml.safe_load(f)['ansible']
    found = []
    for arg in args['executor']['args']['ansible_playbook']:
        if arg.startswith('--inventory='):
            found.append(arg.split('=', 1)[1].replace('${MOLECULE_PROJECT_DIRECTORY}', ROOT)
                         .replace('${MOLECULE_SCENARIO_DIRECTORY}', folder))
    for path in sorted(glob.glob(os.path.join(folder, '*.yml'))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        if isinstance(doc, dict) and set(doc) == {'all'} and path not in found:
            found.append(path)
    return found


def plays_and_hosts(scenario):
    cmd = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '--list-hosts']
    for inv in inventories(scenario):
        cmd += ['-i', inv]
    cmd.append(os.path.join(ROOT, 'molecule', scenario, 'verify.yml'))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'), ANSIBLE_NOCOLOR='1')
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return re.findall(r'play #\d+ \(([^)]*)\): ([^\t\n]*).*?\n\s+pattern: .*?\n\s+hosts \((\d+)\)', result.stdout)


@pytest.mark.parametrize('scenario', SCENARIOS)
def test_every_verify_play_has_a_host(scenario):
    plays = plays_and_hosts(scenario)
    assert len(plays) > 3
    assert [(pattern, name) for pattern, name, count in plays if count == '0'] == []
