"""site.yml's first task loads the collection's filters and Ansible's tests in
the controller's main process (its name is templated there), so that every
task's worker, forked from it, finds them loaded instead of importing them
again (docs/lab.md, "Measure")."""
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_first_task_name_uses_a_collection_filter_and_a_test():
    site = yaml.safe_load(open(os.path.join(ROOT, 'playbooks', 'site.yml')))
    assert site[0]['ansible.builtin.import_playbook'] == 'gpuhpc.slurm.preflight'
    play = yaml.safe_load(open(os.path.join(ROOT, 'playbooks', 'preflight.yml')))[0]
    name = play['tasks'][0]['name']
    assert '__site_problems is falsy' in name, name
    assert 'gpuhpc.slurm.' in play['vars']['__site_problems']
