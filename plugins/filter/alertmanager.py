# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Alertmanager's configuration from the alertmanager role's variables, and the
problems that stop the role before anything changes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError

# Alertmanager's receiver integrations (0.25 to 0.28).
INTEGRATIONS = ('discord_configs', 'email_configs', 'msteams_configs', 'opsgenie_configs', 'pagerduty_configs',
                'pushover_configs', 'slack_configs', 'sns_configs', 'telegram_configs', 'victorops_configs',
                'webex_configs', 'webhook_configs', 'wechat_configs')
SEVERITIES = ('critical', 'warning', 'info')
# Keys that hold a secret: Alertmanager's own secret fields (its Secret and
# SecretURL types, 0.25 to 0.28: Slack's api_url, Discord's and Teams'
# webhook_url among them) and those of its HTTP client (basic_auth.password,
# bearer_token, authorization.credentials, oauth2.client_secret). Their
# values go in alertmanager_secrets (vaulted, never logged), which the role
# writes as files, named by the field's *_file twin; a key ending in _file is
# a path, not a secret. The SMTP password goes in alertmanager_smtp_auth_password.
SECRET = re.compile(r'password|secret|token|api_key|service_key|routing_key|user_key|credentials|api_url|webhook_url',
                    re.I)
URL = re.compile(r'^https?://[^\s/]+')
# A secret's name in alertmanager_secrets: its file's name.
SECRET_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9._-]*$')


def _settings(value, path):
    """(path, key, value) of every key inside value, dicts and lists walked."""
    found = []
    if isinstance(value, dict):
        for key, sub in value.items():
            found.append(('%s.%s' % (path, key), str(key), sub))
            found += _settings(sub, '%s.%s' % (path, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            found += _settings(sub, '%s[%d]' % (path, i))
    return found


def _secrets(value, path):
    """Paths of the secret-looking keys inside value (a *_file key is a path, not a secret)."""
    return [where for where, key, sub in _settings(value, path)
            if SECRET.search(key) and not key.endswith('_file') and sub not in (None, '')]


def _secret_files(value, path):
    """(path, file) of the *_file keys inside value."""
    return [(where, sub) for where, key, sub in _settings(value, path) if key.endswith('_file') and isinstance(sub, str)]


def _route_receivers(route, path):
    """(path, receiver) of a route and its child routes."""
    out = []
    if not isinstance(route, dict):
        return [(path, None)]
    if 'receiver' in route:
        out.append((path, route['receiver']))
    for i, child in enumerate(route.get('routes') or []):
        out += _route_receivers(child, '%s.routes[%d]' % (path, i))
    return out


def alertmanager_problems(settings):
    """One message per problem in the alertmanager role's settings (a dict of its variables, without the
    alertmanager_ prefix; ``secrets``: the names of alertmanager_secrets only, never their values)."""
    if not isinstance(settings, dict):
        raise AnsibleFilterError('alertmanager_problems expects a dict of the role settings')
    problems, names = [], []
    secrets_dir = str(settings.get('secrets_dir') or '').rstrip('/')
    secrets = [str(name) for name in settings.get('secrets') or []]
    for name in secrets:
        if not SECRET_NAME.match(name):
            problems.append("alertmanager_secrets: '%s' is not a file name (letters, digits, '.', '_', '-')" % name)
    receivers = settings.get('receivers')
    if not isinstance(receivers, list) or not receivers:
        return ['alertmanager_receivers must be a non-empty list of receivers ({name: ..., webhook_configs: [...]}); '
                '[{name: "null"}] delivers nothing']
    email = False
    for i, r in enumerate(receivers):
        where = 'alertmanager_receivers[%d]' % i
        if not isinstance(r, dict) or not r.get('name'):
            problems.append('%s has no name: give each receiver a name' % where)
            continue
        where = "%s (%s)" % (where, r['name'])
        if r['name'] in names:
            problems.append("receiver '%s' is defined twice in alertmanager_receivers" % r['name'])
        names.append(r['name'])
        for key in sorted(set(r) - set(INTEGRATIONS) - {'name'}):
            problems.append("%s: '%s' is not a receiver integration (%s)" % (where, key, ', '.join(INTEGRATIONS)))
        for key in sorted(set(r) & set(INTEGRATIONS)):
            configs = r[key]
            if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
                problems.append('%s: %s must be a non-empty list of settings' % (where, key))
                continue
            for j, c in enumerate(configs):
                if key == 'webhook_configs' and not URL.match(str(c.get('url', ''))):
                    problems.append('%s: webhook_configs[%d] needs a url (http:// or https://), has %r'
                                    % (where, j, c.get('url')))
                if key == 'email_configs':
                    email = True
                    if not c.get('to'):
                        problems.append('%s: email_configs[%d] needs to (the address alerts go to)' % (where, j))
        for path in _secrets(r, where):
            problems.append('%s holds a secret in the inventory data, which Ansible prints: put it in '
                            'alertmanager_secrets (vaulted, never logged; written as a file in %s) and give that file '
                            'in %s_file; the SMTP password goes in alertmanager_smtp_auth_password'
                            % (path, secrets_dir, path.rsplit('.', 1)[-1]))
        for path, name in _secret_files(r, where):
            if name.startswith(secrets_dir + '/') and name[len(secrets_dir) + 1:] not in secrets:
                problems.append('%s names %s, which alertmanager_secrets does not define (it has: %s)'
                                % (path, name, ', '.join(sorted(secrets)) or 'none'))
    smtp = settings.get('smtp') or {}
    for path in _secrets(smtp, 'alertmanager_smtp'):
        problems.append('%s: the SMTP password goes in alertmanager_smtp_auth_password (vaulted, never logged)' % path)
    if email:
        for key in ('smarthost', 'from'):
            if not smtp.get(key):
                problems.append('alertmanager_smtp.%s is empty, and a receiver sends email: give the mail relay '
                                '(smarthost: host:port) and the sender (from)' % key)
    if settings.get('smtp_auth_password') and not smtp.get('auth_username'):
        problems.append('alertmanager_smtp_auth_password is set without alertmanager_smtp.auth_username')
    known = set(names)
    severity = settings.get('severity_receivers') or {}
    for key in sorted(set(severity) - set(SEVERITIES)):
        problems.append("alertmanager_severity_receivers: '%s' is not a severity of the collection's alerts (%s)"
                        % (key, ', '.join(SEVERITIES)))
    refs = [('alertmanager_default_receiver', settings.get('default_receiver'))]
    if settings.get('watchdog_receiver') is not None:
        refs.append(('alertmanager_watchdog_receiver', settings.get('watchdog_receiver')))
    refs += [('alertmanager_severity_receivers.%s' % k, v) for k, v in sorted(severity.items())]
    for i, route in enumerate(settings.get('routes_extra') or []):
        refs += _route_receivers(route, 'alertmanager_routes_extra[%d]' % i)
    for path, receiver in refs:
        if receiver is None and path.startswith('alertmanager_routes_extra'):
            problems.append('%s is not a route: give a dict with matchers and receiver' % path)
        elif receiver not in known:
            problems.append("%s names receiver '%s', which alertmanager_receivers does not define (it has: %s)"
                            % (path, receiver, ', '.join(names)))
    for i, rule in enumerate(settings.get('inhibit_rules') or []):
        if not isinstance(rule, dict) or not rule.get('source_matchers') or not rule.get('target_matchers'):
            problems.append('alertmanager_inhibit_rules[%d] needs source_matchers and target_matchers (lists)' % i)
    return problems


def alertmanager_secret_files(secrets, folder, group):
    """The files of the receivers' secrets, as gpuhpc.slurm.config_files
    takes them: ``folder`` (root, ``group``, 0750; anything else in it is
    removed), then ``folder/NAME`` per secret of ``secrets`` (``NAME: value``;
    root, ``group``, 0640), in name order."""
    folder = str(folder).rstrip('/')
    files = [dict(path=folder, state='directory', owner='root', group=group, mode='0750', purge=['*', '.*'])]
    for name, value in sorted((secrets or {}).items()):
        files.append(dict(path='%s/%s' % (folder, name), content=str(value), owner='root', group=group, mode='0640'))
    return files


def alertmanager_config(settings):
    """alertmanager.yml as a dict: the severity routes after the site's own, the site's receivers."""
    smtp = dict((k, v) for k, v in (settings.get('smtp') or {}).items() if v not in (None, ''))
    glob = dict(resolve_timeout='5m')
    for key, value in sorted(smtp.items()):
        glob['smtp_' + key] = value
    if settings.get('smtp_auth_password'):
        glob['smtp_auth_password'] = settings['smtp_auth_password']
    # the dead man's switch first, on its own timing: every few minutes, whatever the site's routes
    routes = [dict(matchers=['alertname="Watchdog"'], receiver=settings.get('watchdog_receiver') or 'null',
                   group_wait='0s', group_interval='1m', repeat_interval='5m')]
    routes += list(settings.get('routes_extra') or [])
    for sev in SEVERITIES:
        receiver = (settings.get('severity_receivers') or {}).get(sev)
        if receiver:
            routes.append(dict(matchers=['severity="%s"' % sev], receiver=receiver))
    route = dict(receiver=settings['default_receiver'], group_by=list(settings.get('group_by') or []),
                 group_wait=settings['group_wait'], group_interval=settings['group_interval'],
                 repeat_interval=settings['repeat_interval'], routes=routes)
    return {'global': glob, 'route': route, 'receivers': settings['receivers'],
            'inhibit_rules': list(settings.get('inhibit_rules') or [])}


class FilterModule(object):
    def filters(self):
        return {
            'alertmanager_config': alertmanager_config,
            'alertmanager_problems': alertmanager_problems,
            'alertmanager_secret_files': alertmanager_secret_files,
        }
