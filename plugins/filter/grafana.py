# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of gpuhpc.slurm.grafana's input that its argument spec cannot
express, as lists of problems (the role's preflight fails on them). They run
on the Ansible controller; the dashboards are read there."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

_URL = re.compile(r'^https?://[^\s/]+(/\S*)?$')
_INI_NAME = re.compile(r'^[A-Za-z0-9_.-]+$')
_UNSAFE = re.compile(r'[\r\n]|"""')
_UID = re.compile(r'^[A-Za-z0-9_-]{1,40}$')


def grafana_problems(settings):
    """Messages naming the variable and the fix; [] for good input. ``settings``: the role's variables
    without the grafana_ prefix. The admin password is never shown."""
    s = settings
    out = []
    password = str(s['admin_password'])
    if not password:
        out.append('grafana_admin_password is empty: set the Grafana admin password (vault it); the role has no '
                   'default for it')
    elif password.lower() == 'admin':
        out.append("grafana_admin_password is 'admin', Grafana's well-known default password: choose another one "
                   "(vault it)")
    if _UNSAFE.search(password):
        out.append('grafana_admin_password holds a line break or three double quotes in a row, which grafana.ini '
                   'cannot carry: choose another one')
    if not re.match(r'^[^\s:"\']+$', str(s['admin_user'])):
        out.append("grafana_admin_user '%s' is not a login name (empty, or a space, ':' or a quote in it)"
                   % s['admin_user'])
    if not re.match(r'^([0-9.]+|[0-9a-fA-F:]+|[A-Za-z0-9.-]+)$', str(s['listen_address'])):
        out.append("grafana_listen_address '%s' is not an address of the host (an IPv4 or IPv6 address without "
                   "brackets, or a host name; 0.0.0.0 or :: for all)" % s['listen_address'])
    if not str(s['port']).isdigit() or not 1 <= int(s['port']) <= 65535:
        out.append('grafana_port %s is not a TCP port (1 to 65535)' % s['port'])
    if s['root_url'] and not _URL.match(s['root_url']):
        out.append("grafana_root_url '%s' is not an http:// or https:// URL (or empty)" % s['root_url'])
    if bool(s['tls_cert_file']) != bool(s['tls_key_file']):
        out.append('grafana_tls_cert_file and grafana_tls_key_file go together: give both or neither')
    for name in ('tls_cert_file', 'tls_key_file'):
        if s[name] and not s[name].startswith('/'):
            out.append("grafana_%s '%s' is not an absolute path on the host" % (name, s[name]))
    if not _URL.match(str(s['prometheus_url'])):
        out.append("grafana_prometheus_url '%s' is not an http:// or https:// URL" % s['prometheus_url'])
    if not re.match(r'^([0-9]+(ms|s|m|h|d))+$', str(s['prometheus_scrape_interval'])):
        out.append("grafana_prometheus_scrape_interval '%s' is not a Prometheus duration such as 15s or 1m"
                   % s['prometheus_scrape_interval'])
    if not re.match(r'^[0-9]+[.][0-9]+[.][0-9]+([-+~][0-9A-Za-z.+~-]+)?$', str(s['version'])):
        out.append("grafana_version '%s' is not a Grafana package version such as 13.2.3" % s['version'])
    if s['repo_url'] and not re.match(r'^https?://\S+$', s['repo_url']):
        out.append("grafana_repo_url '%s' is not an http:// or https:// URL (or empty for Grafana's)" % s['repo_url'])
    if s['repo_key_url'] and not re.match(r'^(https?|file)://\S+$', s['repo_key_url']):
        out.append("grafana_repo_key_url '%s' is not an http://, https:// or file:// URL (or empty)"
                   % s['repo_key_url'])
    if s['repo_key_fingerprint'] and not re.match(r'^[0-9A-Fa-f]{40}$', s['repo_key_fingerprint'].replace(' ', '')):
        out.append("grafana_repo_key_fingerprint '%s' is not an OpenPGP fingerprint (40 hex digits, spaces allowed)"
                   % s['repo_key_fingerprint'])
    package, sha, install = s['package_file'], s['package_sha256'], s.get('install', 'package')
    if install not in ('package', 'files', 'none'):
        out.append("grafana_install '%s' is not package, files or none" % install)
    elif install == 'files' and not package:
        out.append('grafana_install is files but grafana_package_file is empty: give the path of the Grafana package '
                   'on the Ansible controller (with grafana_package_sha256)')
    elif install == 'package' and package:
        out.append("grafana_install is package (from Grafana's repository) but grafana_package_file is set: set "
                   'grafana_install: files (or leave it out) to install that file, or take grafana_package_file out')
    if package:
        if not package.startswith('/'):
            out.append("grafana_package_file '%s' is not an absolute path on the Ansible controller" % package)
        if not re.match(r'^.*[.](deb|rpm)$', package):
            out.append("grafana_package_file '%s' is neither a .deb nor an .rpm file" % package)
        if not re.match(r'^[0-9a-fA-F]{64}$', sha):
            out.append('grafana_package_file needs grafana_package_sha256, the SHA-256 (64 hex digits) of the '
                       'package file: the role installs nothing it has not checked')
    elif sha:
        out.append('grafana_package_sha256 is set but grafana_package_file is empty: give the package file too, '
                   'or neither')
    try:
        price = float(s['gpu_hour_price'])
    except (TypeError, ValueError):
        price = -1
    if not 0 <= price < float('inf'):
        out.append("grafana_gpu_hour_price '%s' is not a price: give the price of one GPU-hour as a number, 0 or "
                   "more (it defaults to the inventory's gpu_usage_price)" % s['gpu_hour_price'])
    if _UNSAFE.search(str(s['currency'])) or len(str(s['currency'])) > 16:
        out.append("grafana_currency '%s' is not a currency such as EUR or USD (at most 16 characters, one line)"
                   % s['currency'])
    if not str(s['dashboards_folder']).strip():
        out.append('grafana_dashboards_folder is empty: give the name of the folder the dashboards appear in')
    ini = grafana_ini_problems(s['ini_extra'], s['ini_managed'])
    return out + (['grafana_ini_extra: ' + '; '.join(ini)] if ini else [])


def grafana_ini_problems(extra, managed):
    """grafana_ini_extra must be sections of settings (strings, numbers, booleans) that the role does not
    set (``managed``: the role's own grafana.ini, section -> keys)."""
    out = []
    for section, settings in (extra or {}).items():
        if not isinstance(section, str) or not _INI_NAME.match(section):
            out.append("section '%s' is not a grafana.ini section name" % section)
        elif not isinstance(settings, dict):
            out.append('[%s] is not a mapping of key: value' % section)
        else:
            for key, value in settings.items():
                if key in (managed or {}).get(section, {}):
                    out.append('[%s] %s is set by the role from its grafana_* variables: use those' % (section, key))
                elif not isinstance(key, str) or not _INI_NAME.match(key):
                    out.append("[%s] '%s' is not a grafana.ini key" % (section, key))
                elif value is None or isinstance(value, (dict, list, tuple)):
                    out.append('[%s] %s must be a string, a number or true/false' % (section, key))
                elif _UNSAFE.search(str(value)):
                    out.append('[%s] %s holds a line break or three double quotes in a row' % (section, key))
    return out


def _read(entry):
    """(dashboard or None, problem or None) of one file."""
    try:
        with open(entry['path']) as f:
            text = f.read()
    except (IOError, OSError) as e:
        return None, '%s cannot be read (%s)' % (entry['name'], e.strerror or e)
    try:
        value = json.loads(text)
    except ValueError as e:
        return None, '%s is not valid JSON (%s): fix the file%s' % (
            entry['name'], e, ', or take it out of grafana_dashboards_extra' if entry['extra'] else '')
    return dict(entry, object=isinstance(value, dict), inputs='${DS_' in text,
                uid=value.get('uid') if isinstance(value, dict) else None,
                title=value.get('title') if isinstance(value, dict) else None), None


def grafana_dashboard_problems(own, extra, datasource_uid, dashboards_dir):
    """Every dashboard (``own``: the role's files; ``extra``: grafana_dashboards_extra), read as JSON on
    the controller, must be one Grafana can provision: a file, a dashboard with a fixed uid and a title,
    no ``${DS_...}`` inputs, no uid or file name twice."""
    out, entries = [], []
    for path in sorted(own):
        entries.append(dict(name="the role's dashboard files/dashboards/" + os.path.basename(path), path=path,
                            extra=False))
    for index, path in enumerate(extra or []):
        where = "grafana_dashboards_extra[%d] '%s'" % (index, path)
        if not isinstance(path, str) or not path.endswith('.json'):
            out.append('%s is not a path ending in .json' % where)
        elif not path.startswith('/'):
            out.append('%s is not an absolute path' % where)
        elif not os.path.isfile(path):
            out.append('%s is not a file on the Ansible controller' % where)
        else:
            entries.append(dict(name='grafana_dashboards_extra[%d] %s' % (index, path), path=path, extra=True))
    read = []
    for entry in entries:
        d, problem = _read(entry)
        if problem:
            out.append(problem)
            continue
        name = d['name']
        if not d['object']:
            out.append('%s is JSON but not a dashboard (an object with uid and title)' % name)
        else:
            if not isinstance(d['uid'], str) or not _UID.match(d['uid']):
                out.append('%s has no uid, or one that is not 1 to 40 letters, digits, - or _: give it a fixed uid '
                           '(links and bookmarks use it)' % name)
            if not isinstance(d['title'], str) or not d['title'].strip():
                out.append('%s has no title' % name)
            if d['inputs']:
                out.append('%s was exported for sharing externally (${DS_...} inputs), which file provisioning does '
                           'not fill in: export it again without that option, or put the data source uid %s in '
                           'place of ${DS_...}' % (name, datasource_uid))
        for e in read:
            if d['object'] and e['object'] and isinstance(d['uid'], str) and d['uid'] and e['uid'] == d['uid']:
                out.append("%s has uid '%s', as %s does: Grafana would keep only one of them"
                           % (name, d['uid'], e['name']))
            if os.path.basename(e['path']) == os.path.basename(d['path']):
                out.append('%s has the file name of %s: both go into %s, so rename one'
                           % (name, e['name'], dashboards_dir))
        read.append(d)
    return out


PRICE_VARIABLE = 'gpu_hour_price'


def _price_text(price):
    """2.5 -> '2.5', 3 -> '3', 0.125 -> '0.125': the price as PromQL and Grafana show it."""
    return ('%.6f' % float(price)).rstrip('0').rstrip('.')


def grafana_dashboard_price(content, price, currency=''):
    """The dashboard ``content`` (JSON text) with the price of one GPU-hour set: the value of its constant
    variable ``gpu_hour_price``, and ``currency`` as the unit of the panels that multiply by it. A dashboard
    without that variable is returned as it is; one with it, written as the role's files are (JSON, indent
    2), so that the same price gives the same file."""
    dashboard = json.loads(content)
    variables = (dashboard.get('templating') or {}).get('list') or []
    variable = next((v for v in variables if v.get('name') == PRICE_VARIABLE), None)
    if variable is None:
        return content
    text = _price_text(price)
    variable.update(query=text, current=dict(text=text, value=text))
    unit = 'suffix: %s' % currency if currency else 'none'
    for panel in dashboard.get('panels') or []:
        if any('$' + PRICE_VARIABLE in (t.get('expr') or '') for t in panel.get('targets') or []):
            panel.setdefault('fieldConfig', {}).setdefault('defaults', {})['unit'] = unit
    return json.dumps(dashboard, indent=2) + '\n'


class FilterModule(object):
    def filters(self):
        return {'grafana_problems': grafana_problems,
                'grafana_ini_problems': grafana_ini_problems,
                'grafana_dashboard_problems': grafana_dashboard_problems,
                'grafana_dashboard_price': grafana_dashboard_price}
