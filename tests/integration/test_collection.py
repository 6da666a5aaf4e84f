"""The built collection installs, and resolves by FQCN outside this repo.

Builds the tarball with ansible-galaxy, installs it into a temporary
collections path, and runs playbooks from a folder outside the checkout.
"""
import base64
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp('collection')
    build, collections, work = base / 'build', base / 'collections', base / 'elsewhere'
    work.mkdir()
    env = dict(os.environ,
               ANSIBLE_COLLECTIONS_PATH=str(collections),
               ANSIBLE_CONFIG=str(work / 'none.cfg'),  # not this repo's ansible.cfg
               ANSIBLE_RETRY_FILES_ENABLED='false',
               ANSIBLE_NOCOLOR='1')
    subprocess.run(['ansible-galaxy', 'collection', 'build', '--output-path', str(build), ROOT],
                   check=True, capture_output=True, cwd=work, env=env)
    tarballs = list(build.glob('gpuhpc-slurm-*.tar.gz'))
    assert len(tarballs) == 1
    subprocess.run(['ansible-galaxy', 'collection', 'install', '-p', str(collections), str(tarballs[0])],
                   check=True, capture_output=True, cwd=work, env=env)
    assert (collections / 'ansible_collections' / 'gpuhpc' / 'slurm' / 'MANIFEST.json').exists()
    return dict(base=base, tarball=tarballs[0], work=work, env=env, collections=collections)


def run(installed, *argv, check=True):
    result = subprocess.run(list(argv), cwd=installed["work"], env=installed["env"], check=False,
                            capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError('%s failed:\n%s\n%s' % (' '.join(argv), result.stdout, result.stderr))
    return result


def write_inventory(installed, name, text):
    path = installed['work'] / name
    path.write_text(text)
    return str(path)


# The collection's own content: what a user installs (galaxy.yml's manifest).
CONTENT = {'FILES.json', 'changelogs', 'LICENSE', 'MANIFEST.json', 'README.md', 'docs', 'inventory', 'meta',
           'playbooks', 'plugins', 'roles'}


def listing(tarball):
    return subprocess.run(['tar', '-tzf', str(tarball)], check=True, capture_output=True, text=True).stdout.split()


def test_tarball_holds_only_the_collections_content(installed):
    names = listing(installed['tarball'])
    assert 'roles/munge/tasks/main.yml' in names
    assert 'playbooks/site.yml' in names
    assert set(n.split('/')[0] for n in names) == CONTENT
    assert set(n.split('/')[1] for n in names if n.startswith('inventory/') and n.count('/') > 1) == {'example'}


# An execution environment (AWX, Automation Platform) of this collection, as
# docs/awx.md gives it, the collection from the built tarball.
EE = """---
version: 3
images:
  base_image:
    name: quay.io/centos/centos:stream9
dependencies:
  ansible_core:
    package_pip: ansible-core>=2.16,<2.20
  ansible_runner:
    package_pip: ansible-runner
  galaxy:
    collections:
      - name: collections/%s
        type: file
additional_build_files:
  - src: %s
    dest: collections
"""


def test_an_execution_environment_gets_the_collections_requirements(installed, tmp_path):
    """ansible-builder finds what meta/execution-environment.yml names in the
    installed collection, and makes a build context from a definition that
    installs the tarball (no container is built: no registry is needed)."""
    found = run(installed, 'ansible-builder', 'introspect', str(installed['collections'])).stdout
    assert 'cryptography>=3.4  # from collection gpuhpc.slurm' in found, found
    assert 'bcrypt>=3.2  # from collection gpuhpc.slurm' in found, found
    assert 'openssh-client [platform:dpkg]  # from collection gpuhpc.slurm' in found, found
    tarball = tmp_path / installed['tarball'].name
    tarball.write_bytes(installed['tarball'].read_bytes())
    (tmp_path / 'execution-environment.yml').write_text(EE % (tarball.name, tarball.name))
    run(installed, 'ansible-builder', 'create', '-f', str(tmp_path / 'execution-environment.yml'),
        '--context', str(tmp_path / 'context'))
    context = tmp_path / 'context'
    assert (context / 'Containerfile').exists() or (context / 'Dockerfile').exists()
    assert (context / '_build' / 'collections' / tarball.name).read_bytes() == tarball.read_bytes()
    assert 'collections/gpuhpc-slurm-' in (context / '_build' / 'requirements.yml').read_text()


def test_a_used_checkout_packs_no_inventory_pki_or_cache(tmp_path):
    """A checkout after `cp -r inventory/example inventory/prod` and a run: the
    site inventory (vaulted values), the web_config CA's private key, the
    caches; none of them may reach the tarball."""
    tree = tmp_path / 'checkout'
    files = subprocess.run(['git', 'ls-files', '-z'], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, files.decode().split('\0')):
        src, dest = os.path.join(ROOT, name), tree / name
        if os.path.isfile(src):
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(open(src, 'rb').read())
    planted = {
        'inventory/prod/hosts.yml': 'all: {}\n',
        'inventory/prod/group_vars/all/vault.yml': '$ANSIBLE_VAULT;1.1;AES256\n3031\n',
        'inventory/prod/pki/ca.key': '-----BEGIN PRIVATE KEY-----\n',
        'inventory/example/pki/ca.key': '-----BEGIN PRIVATE KEY-----\n',
        '.pytest_cache/v/cache/lastfailed': '{}\n',
        '.molecule/state.yml': '{}\n',
        'roles/munge/.pytest_cache/x': '{}\n',
        'secrets.yml': 'munge_key: x\n',
    }
    for name, text in planted.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    out = tmp_path / 'build'
    subprocess.run(['ansible-galaxy', 'collection', 'build', '--output-path', str(out), str(tree)],
                   check=True, capture_output=True, cwd=str(tmp_path))
    names = listing(next(out.glob('gpuhpc-slurm-*.tar.gz')))
    assert [n for n in names if any(n.startswith(p) for p in planted)] == []
    assert not [n for n in names if 'pki' in n.split('/') or n.endswith('.key') or 'inventory/prod' in n]
    assert set(n.split('/')[0] for n in names) == CONTENT


@pytest.mark.parametrize('kind, name', [
    ('module', 'gpuhpc.slurm.munge_key'),
    ('role', 'gpuhpc.slurm.munge'),
    ('filter', 'gpuhpc.slurm.inventory_problems'),
    ('filter', 'gpuhpc.slurm.munge_key_error'),
])
def test_plugins_and_roles_resolve_by_fqcn(installed, kind, name):
    out = run(installed, 'ansible-doc', '-t', kind, name).stdout
    assert name.split('.')[-1] in out


def test_site_playbook_resolves_by_fqcn(installed):
    inventory = os.path.join(ROOT, 'inventory', 'example')
    out = run(installed, 'ansible-playbook', '-i', inventory, '--syntax-check', 'gpuhpc.slurm.site')
    assert 'ansible_collections/gpuhpc/slurm/playbooks/site.yml' in out.stdout


def test_preflight_accepts_the_example_inventory(installed):
    inventory = os.path.join(ROOT, 'inventory', 'example')
    out = run(installed, 'ansible-playbook', '-i', inventory, 'gpuhpc.slurm.preflight')
    assert 'failed=0' in out.stdout


@pytest.mark.parametrize('name, text, messages', [
    ('broken.yml', """
all:
  children:
    slurm_compute:
      hosts:
        gpu-01:
        mon-01:
    monitoring:
      hosts:
        mon-01:
""", ["inventory group 'slurm_controller' is missing",
      "host 'mon-01' is in both 'monitoring' and 'slurm_compute'"]),
    ('empty.yml', """
all:
  children:
    slurm_controller:
      hosts: {}
    slurm_compute:
      hosts:
        gpu-01:
""", ["inventory group 'slurm_controller' has no host"]),
])
def test_preflight_names_what_is_wrong(installed, name, text, messages):
    inventory = write_inventory(installed, name, text)
    out = run(installed, 'ansible-playbook', '-i', inventory, 'gpuhpc.slurm.preflight', check=False)
    assert out.returncode != 0
    for message in messages:
        assert message in out.stdout


def test_munge_key_module_from_a_playbook_outside_the_repo(installed):
    key = base64.b64encode(os.urandom(1024)).decode()
    target = installed['work'] / 'munge.key'
    playbook = installed['work'] / 'key.yml'
    playbook.write_text("""
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - gpuhpc.slurm.munge_key:
        path: %s
        key: "{{ key }}"
        mode: "0400"
      no_log: true
""" % target)
    first = run(installed, 'ansible-playbook', '-e', 'key=' + key, str(playbook))
    assert 'changed=1' in first.stdout
    assert target.read_bytes() == base64.b64decode(key)
    again = run(installed, 'ansible-playbook', '-e', 'key=' + key, str(playbook))
    assert 'changed=0' in again.stdout
    assert key not in first.stdout + again.stdout
