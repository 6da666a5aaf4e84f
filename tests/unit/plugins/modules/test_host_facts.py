"""host_facts' own gathering of Ansible's facts (gather_subset, filter): the same
names as ansible.builtin.setup's, in the same round trip as the packages."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuhpc.slurm.plugins.modules import host_facts


def test_reads_a_subset_of_ansible_facts_under_setups_names(run_module):
    result = run_module(host_facts.main, dict(gather=[], gather_subset=['!all', '!min', 'distribution', 'platform']))
    facts = result['ansible_facts']
    assert result['changed'] is False
    assert {'ansible_distribution', 'ansible_os_family', 'ansible_architecture'} <= set(facts)
    assert 'ansible_memtotal_mb' not in facts


def test_filter_keeps_only_the_named_facts(run_module):
    result = run_module(host_facts.main, dict(gather=[], gather_subset=['!all', '!min', 'distribution', 'hardware'],
                                              filter=['ansible_os_family', 'ansible_memtotal_mb', 'ansible_processor_*']))
    facts = result['ansible_facts']
    assert {'ansible_os_family', 'ansible_memtotal_mb', 'ansible_processor_vcpus'} <= set(facts)
    assert not {'ansible_distribution', 'ansible_mounts', 'ansible_processor', 'ansible_devices'} & set(facts)


def test_no_subset_reads_none_of_ansibles_facts(run_module):
    assert run_module(host_facts.main, dict(gather=[]))['ansible_facts'] == {}


def test_a_bad_subset_names_the_option_and_the_fix(run_module):
    result = run_module(host_facts.main, dict(gather=[], gather_subset=['bogus']))
    assert result['failed'] is True
    assert "gather_subset ['bogus']" in result['msg']
    assert 'setup' in result['fix']


def test_paths_reports_each_patterns_existing_matches(run_module, tmp_path):
    (tmp_path / 'web' / 'node_exporter').mkdir(parents=True)
    (tmp_path / 'web' / 'prometheus').mkdir()
    web, driver = str(tmp_path / 'web' / '*'), str(tmp_path / 'driver' / 'version')
    facts = run_module(host_facts.main, dict(gather=[], paths=[web, driver]))['ansible_facts']
    assert facts == {'paths': {web: [str(tmp_path / 'web' / 'node_exporter'), str(tmp_path / 'web' / 'prometheus')],
                               driver: []}}


def test_a_relative_path_pattern_is_refused(run_module):
    result = run_module(host_facts.main, dict(gather=[], paths=['etc/*']))
    assert result['failed'] is True
    assert result['msg'] == 'paths: etc/* not absolute'


def test_cpu_memory_are_setups_processor_and_memory_facts_without_the_rest(run_module):
    facts = run_module(host_facts.main, dict(gather=['cpu_memory'], gather_subset=['!all', '!min', 'platform'],
                                             filter=['ansible_architecture', 'ansible_memtotal_mb',
                                                     'ansible_processor_*']))['ansible_facts']
    hardware = run_module(host_facts.main, dict(gather=[], gather_subset=['!all', '!min', 'hardware'],
                                                filter=['ansible_processor_*']))['ansible_facts']
    assert {k: v for k, v in facts.items() if k.startswith('ansible_processor_')} == hardware
    assert facts['ansible_memtotal_mb'] > 0
    assert 'ansible_mounts' not in facts and 'ansible_processor' not in facts


def test_ports_are_the_tcp_ports_listening_here(run_module):
    import socket
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        facts = run_module(host_facts.main, dict(gather=['ports']))['ansible_facts']
    finally:
        server.close()
    assert port in facts['tcp_listening']
    assert facts['tcp_listening'] == sorted(facts['tcp_listening'])


def fake_systemctl(tmp_path, monkeypatch, script):
    tool = tmp_path / 'systemctl'
    tool.write_text('#!/bin/sh\n' + script)
    tool.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (tmp_path, os.environ['PATH']))


def test_no_unit_matching_the_patterns_is_no_service(run_module, tmp_path, monkeypatch):
    # systemd 252 (Debian 12) and 257 (Debian 13): `list-unit-files PATTERN...`
    # exits 1 and prints nothing where no unit file matches, as on a new host
    fake_systemctl(tmp_path, monkeypatch, 'exit 1\n')
    result = run_module(host_facts.main, dict(gather=['services'], services=['munge', 'slurm*']))
    assert result['ansible_facts'] == {'services': {}}


def test_a_systemctl_that_fails_with_a_message_fails_the_module(run_module, tmp_path, monkeypatch):
    fake_systemctl(tmp_path, monkeypatch, 'echo "Failed to connect to bus: Host is down" >&2\nexit 1\n')
    result = run_module(host_facts.main, dict(gather=['services'], services=['munge']))
    assert result['failed'] is True
    assert 'Failed to connect to bus' in result['msg']
