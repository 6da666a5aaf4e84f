"""The alertmanager role's rules (plugins/filter/alertmanager.py): the
configuration it writes, and the bad input it refuses, by name."""
import os

import pytest
import yaml
from ansible_collections.gpuhpc.slurm.plugins.filter.alertmanager import (
    FilterModule,
    alertmanager_config,
    alertmanager_problems,
    alertmanager_secret_files,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def defaults():
    with open(os.path.join(ROOT, 'roles', 'alertmanager', 'defaults', 'main.yml')) as f:
        d = yaml.safe_load(f)
    return dict((k[len('alertmanager_'):], v) for k, v in d.items() if k not in (
        'alertmanager_listen_address', 'alertmanager_storage_path', 'alertmanager_retention'))


def site(**changes):
    s = defaults()
    s.update(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': [{'url': 'http://pager.example:8080/'}]},
                        {'name': 'team', 'email_configs': [{'to': 'hpc@example.org'}]}],
             severity_receivers={'critical': 'oncall', 'warning': 'team', 'info': 'null'},
             smtp={'smarthost': 'mail.example.org:587', 'from': 'am@example.org', 'auth_username': 'am'},
             smtp_auth_password='s3cr;t!@')
    s.update(secrets=[])
    s.update(changes)
    return s


def test_the_defaults_pass_and_deliver_nothing():
    s = dict(defaults(), smtp_auth_password=False)
    assert alertmanager_problems(s) == []
    config = alertmanager_config(dict(s, smtp_auth_password=''))
    assert config['route']['receiver'] == 'null'
    assert [r['receiver'] for r in config['route']['routes']] == ['null', 'null', 'null', 'null']
    assert config['receivers'] == [{'name': 'null'}]


def test_severity_routes_follow_the_sites_own_and_the_password_goes_to_global():
    extra = [{'matchers': ['partition="a100"'], 'receiver': 'team'}]
    config = alertmanager_config(site(routes_extra=extra))
    routes = config['route']['routes']
    # the dead man's switch first, every 5 minutes, to its own receiver ("null" by default)
    assert routes[0] == {'matchers': ['alertname="Watchdog"'], 'receiver': 'null', 'group_wait': '0s',
                         'group_interval': '1m', 'repeat_interval': '5m'}
    routes = routes[1:]
    assert routes[0] == extra[0]
    assert routes[1:] == [{'matchers': ['severity="critical"'], 'receiver': 'oncall'},
                          {'matchers': ['severity="warning"'], 'receiver': 'team'},
                          {'matchers': ['severity="info"'], 'receiver': 'null'}]
    assert config['global']['smtp_smarthost'] == 'mail.example.org:587'
    assert config['global']['smtp_auth_password'] == 's3cr;t!@'
    assert config['route']['group_by'] == ['alertname']
    # the node-down inhibition: one page for one fault
    node_down = [r for r in config['inhibit_rules'] if r['source_matchers'] == ['alertname=~"SlurmNodeNotResponding|SlurmNodeDown"']]
    assert node_down and node_down[0]['equal'] == ['instance']
    # storm control: one cause, one page
    sources = [tuple(r['source_matchers']) for r in config['inhibit_rules']]
    assert ('alertname="SlurmNodeOutOfService"',) in sources and ('alertname="SlurmctldNotResponding"',) in sources
    assert ('alertname="SlurmServiceNotActive"', 'name="slurmctld.service"') in sources
    assert alertmanager_problems(site(routes_extra=extra, smtp_auth_password=True)) == []


@pytest.mark.parametrize('changes, message', [
    (dict(severity_receivers={'critical': 'pager', 'warning': 'team', 'info': 'null'}),
     "alertmanager_severity_receivers.critical names receiver 'pager', which alertmanager_receivers does not define "
     "(it has: null, oncall, team)"),
    (dict(watchdog_receiver='deadmans'),
     "alertmanager_watchdog_receiver names receiver 'deadmans', which alertmanager_receivers does not define"),
    (dict(default_receiver='nobody'),
     "alertmanager_default_receiver names receiver 'nobody', which alertmanager_receivers does not define"),
    (dict(routes_extra=[{'matchers': ['a="b"'], 'receiver': 'team', 'routes': [{'receiver': 'ops'}]}]),
     "alertmanager_routes_extra[0].routes[0] names receiver 'ops', which alertmanager_receivers does not define"),
    (dict(routes_extra=['team']), 'alertmanager_routes_extra[0] is not a route: give a dict with matchers and receiver'),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': [{'url': 'pager:8080'}]},
                     {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]),
     "alertmanager_receivers[1] (oncall): webhook_configs[0] needs a url (http:// or https://), has 'pager:8080'"),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhooks': [{'url': 'http://x/'}]},
                     {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]),
     "alertmanager_receivers[1] (oncall): 'webhooks' is not a receiver integration"),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': []},
                     {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]),
     'alertmanager_receivers[1] (oncall): webhook_configs must be a non-empty list of settings'),
    (dict(receivers=[{'name': 'null'}, {'webhook_configs': [{'url': 'http://x/'}]}]),
     'alertmanager_receivers[1] has no name: give each receiver a name'),
    (dict(receivers=[{'name': 'null'}, {'name': 'null'}]), "receiver 'null' is defined twice in alertmanager_receivers"),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': [{'url': 'http://x/'}]},
                     {'name': 'team', 'email_configs': [{'to': 'x@example.org', 'auth_password': 'hunter2'}]}]),
     'alertmanager_receivers[2] (team).email_configs[0].auth_password holds a secret in the inventory data, which '
     'Ansible prints: put it in alertmanager_secrets (vaulted, never logged; written as a file in '
     '/etc/prometheus/alertmanager-secrets) and give that file in auth_password_file; the SMTP password goes in '
     'alertmanager_smtp_auth_password'),
    # Slack's webhook address is itself a secret (Alertmanager's SecretURL)
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'slack_configs': [{'api_url': 'https://hooks.slack.com/T/hunter2'}]},
                     {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]),
     'alertmanager_receivers[1] (oncall).slack_configs[0].api_url holds a secret in the inventory data'),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'webhook_configs': [
        {'url': 'http://x/', 'http_config': {'basic_auth': {'username': 'am', 'password': 'hunter2'}}}]},
        {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]),
     'alertmanager_receivers[1] (oncall).webhook_configs[0].http_config.basic_auth.password holds a secret'),
    (dict(receivers=[{'name': 'null'}, {'name': 'oncall', 'pagerduty_configs': [
        {'routing_key_file': '/etc/prometheus/alertmanager-secrets/pagerduty'}]},
        {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}], secrets=['opsgenie']),
     'alertmanager_receivers[1] (oncall).pagerduty_configs[0].routing_key_file names '
     '/etc/prometheus/alertmanager-secrets/pagerduty, which alertmanager_secrets does not define (it has: opsgenie)'),
    (dict(secrets=['../x']), "alertmanager_secrets: '../x' is not a file name"),
    (dict(smtp={'smarthost': 'mail:25', 'from': 'a@b', 'auth_username': 'am', 'auth_password': 'hunter2'}),
     'alertmanager_smtp.auth_password: the SMTP password goes in alertmanager_smtp_auth_password (vaulted, never logged)'),
    (dict(smtp={'from': 'a@b'}),
     'alertmanager_smtp.smarthost is empty, and a receiver sends email: give the mail relay'),
    (dict(smtp={'smarthost': 'mail:25', 'from': 'a@b'}, smtp_auth_password=True),
     'alertmanager_smtp_auth_password is set without alertmanager_smtp.auth_username'),
    (dict(severity_receivers={'critical': 'oncall', 'page': 'oncall'}),
     "alertmanager_severity_receivers: 'page' is not a severity of the collection's alerts (critical, warning, info)"),
    (dict(inhibit_rules=[{'source_matchers': ['a="b"']}]),
     'alertmanager_inhibit_rules[0] needs source_matchers and target_matchers (lists)'),
    (dict(receivers=[]), 'alertmanager_receivers must be a non-empty list of receivers'),
])
def test_bad_input_is_named(changes, message):
    s = site(**changes)
    if s.get('smtp_auth_password') not in (True, False):
        s['smtp_auth_password'] = bool(s['smtp_auth_password'])
    problems = alertmanager_problems(s)
    assert any(message in p for p in problems), problems
    assert all('hunter2' not in p and 's3cr' not in p for p in problems)  # no secret in a message


def test_pagerduty_and_opsgenie_through_secret_files():
    # the *_file twins of Alertmanager's secret fields, with alertmanager_secrets' files (0.25 and later)
    receivers = [{'name': 'null'},
                 {'name': 'pager', 'pagerduty_configs': [{'routing_key_file': '/etc/prometheus/alertmanager-secrets/pd'}]},
                 {'name': 'genie', 'opsgenie_configs': [{'api_key_file': '/etc/prometheus/alertmanager-secrets/og'}]},
                 {'name': 'hook', 'webhook_configs': [{'url': 'https://hook.example/', 'http_config': {
                     'basic_auth': {'username': 'am', 'password_file': '/etc/prometheus/alertmanager-secrets/hook'}}}]},
                 {'name': 'team', 'email_configs': [{'to': 'x@example.org'}]}]
    s = site(receivers=receivers, secrets=['pd', 'og', 'hook'], smtp_auth_password=True,
             severity_receivers={'critical': 'pager', 'warning': 'genie', 'info': 'hook'})
    assert alertmanager_problems(s) == []
    config = alertmanager_config(dict(s, smtp_auth_password='x'))
    assert config['receivers'][1]['pagerduty_configs'][0] == {'routing_key_file': '/etc/prometheus/alertmanager-secrets/pd'}
    assert 'secrets' not in config and 'secrets_dir' not in config


def test_secret_files_are_the_folder_then_one_file_each():
    files = alertmanager_secret_files({'pd': 'k3y', 'hook': 'p@ss'}, '/etc/prometheus/alertmanager-secrets/', 'prometheus')
    assert files[0] == dict(path='/etc/prometheus/alertmanager-secrets', state='directory', owner='root',
                            group='prometheus', mode='0750', purge=['*', '.*'])
    assert [(f['path'], f['content'], f['mode']) for f in files[1:]] == [
        ('/etc/prometheus/alertmanager-secrets/hook', 'p@ss', '0640'), ('/etc/prometheus/alertmanager-secrets/pd', 'k3y', '0640')]
    assert alertmanager_secret_files({}, '/x', 'prometheus') == [
        dict(path='/x', state='directory', owner='root', group='prometheus', mode='0750', purge=['*', '.*'])]


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {'alertmanager_config', 'alertmanager_problems', 'alertmanager_secret_files'}
