"""gpuhpc.slurm.alertmanager: bad input stops the role before anything changes
on the monitoring host, with a message naming the variable; the SMTP password
never shows, even at -vvv. The role's preflight runs against local hosts;
nothing is installed. The rules themselves are unit-tested
(tests/unit/plugins/filter/test_alertmanager.py)."""
import pytest

from local_play import inventory, play

PREFLIGHT = '''
- hosts: ctl
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuhpc.slurm.alertmanager
        tasks_from: preflight
'''
PASSWORD = 'Vault-only;pass!@word'
SITE = dict(
    alertmanager_receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': [{'url': 'http://pager.example/'}]},
                            {'name': 'team', 'email_configs': [{'to': 'hpc@example.org'}]}],
    alertmanager_severity_receivers={'critical': 'oncall', 'warning': 'team', 'info': 'null'},
    alertmanager_smtp={'smarthost': 'mail.example.org:587', 'from': 'am@example.org', 'auth_username': 'am'},
    alertmanager_smtp_auth_password=PASSWORD)


def run(tmp_path, group_vars, verbosity=0):
    hosts = inventory(dict(monitoring=dict(ctl=None)), group_vars)
    rc, out, raw = play(tmp_path, PREFLIGHT, hosts, verbosity=verbosity)
    return rc, out, raw


def test_the_defaults_pass(tmp_path):
    rc, out, dummy = run(tmp_path, {})
    assert rc == 0, out


def test_a_site_passes_and_its_password_never_shows(tmp_path):
    rc, out, raw = run(tmp_path, SITE, verbosity=3)
    assert rc == 0, out
    assert PASSWORD not in raw and 'Vault-only' not in raw


@pytest.mark.parametrize('changes, message', [
    (dict(alertmanager_severity_receivers={'critical': 'pager', 'warning': 'team', 'info': 'null'}),
     "Alertmanager settings: alertmanager_severity_receivers.critical names receiver 'pager', which "
     "alertmanager_receivers does not define (it has: null, oncall, team)"),
    (dict(alertmanager_receivers=SITE['alertmanager_receivers'][:2] + [{'name': 'team', 'email_configs': 'hpc@x'}]),
     'alertmanager_receivers[2] (team): email_configs must be a non-empty list of settings'),
    (dict(alertmanager_receivers=SITE['alertmanager_receivers'][:2] + [
        {'name': 'team', 'email_configs': [{'to': 'hpc@example.org', 'auth_password': 'Plain-text-secret'}]}]),
     'alertmanager_receivers[2] (team).email_configs[0].auth_password holds a secret in the inventory data, '
     'which Ansible prints: put it in alertmanager_secrets (vaulted, never logged; written as a file in '
     '/etc/prometheus/alertmanager-secrets) and give that file in auth_password_file'),
    (dict(alertmanager_listen_address='localhost'),
     "alertmanager_listen_address 'localhost' is not ADDRESS:PORT (e.g. 0.0.0.0:9093)"),
])
def test_bad_input_is_named(tmp_path, changes, message):
    rc, out, dummy = run(tmp_path, dict(SITE, **changes))
    assert rc != 0
    assert message in out, out
    assert 'Plain-text-secret' not in out and PASSWORD not in out
