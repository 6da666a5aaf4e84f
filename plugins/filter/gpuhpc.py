# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters used by the collection's preflight checks and its verify plays."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuhpc.slurm.plugins.module_utils.listen import probe
from ansible_collections.gpuhpc.slurm.plugins.module_utils.munge import MungeKeyError, decode_key


def inventory_problems(groups, required, exclusive):
    """Return a list of messages, one per problem found in the inventory.

    ``groups`` is Ansible's ``groups`` magic variable, ``required`` a list of
    group names that must exist with at least one host, ``exclusive`` a list of
    pairs of groups that may not share a host.
    """
    if not isinstance(groups, dict):
        raise AnsibleFilterError('inventory_problems expects the groups variable (a dict)')
    problems = []
    for name in required:
        if name not in groups:
            problems.append("inventory group '%s' is missing: add it with at least one host "
                            "(see inventory/example/hosts.yml)" % name)
        elif not groups[name]:
            problems.append("inventory group '%s' has no host: put at least one host in it" % name)
    for pair in exclusive:
        if len(pair) != 2:
            raise AnsibleFilterError('each exclusive entry must be a pair of group names, got %r' % (pair,))
        first, second = pair
        shared = [h for h in groups.get(first, []) if h in groups.get(second, [])]
        for host in shared:
            problems.append("host '%s' is in both '%s' and '%s', which must not share a host: "
                            "move it out of one of them" % (host, first, second))
    return problems


def munge_key_error(value, name='munge_key'):
    """Return why ``value`` is not a usable base64 munge key, or '' when it is."""
    try:
        decode_key(value, name)
    except MungeKeyError as e:
        return str(e)
    return ''


def munge_problems(settings):
    """The munge role's input problems on one host, as messages naming the
    variable and the fix ([] for good input); none contains the key.

    settings: key (munge_key), others (the hosts of the play whose munge_key
    differs from the first host's), first (that host), key_host
    (munge_key_host), key_host_known (whether the inventory has that host),
    num_threads."""
    s = settings
    problems = []
    key = s.get('key') or ''
    if key and munge_key_error(key, 'munge_key'):
        problems.append(munge_key_error(key, 'munge_key'))
    if s.get('others'):
        problems.append('munge_key differs between %s and %s: a cluster has one munge key; define munge_key once '
                        '(e.g. in group_vars/all) or on no host at all' % (s.get('first'), ', '.join(s['others'])))
    if not key and not s.get('key_host_known'):
        problems.append("munge_key_host '%s' is not a host of the inventory: name the host that holds (or should "
                        "make) the munge key, or set munge_key" % s.get('key_host'))
    try:
        threads = int(s.get('num_threads'))
    except (TypeError, ValueError):
        threads = 0
    if threads < 1:
        problems.append('munge_num_threads is %s: give at least 1' % s.get('num_threads'))
    return problems


def prometheus_samples(text):
    """Read Prometheus' text exposition format into ``{series: value}``.

    ``series`` is the sample as written before its value, e.g.
    ``slurm_jobs_pending{partition="gpu",reason="Priority"}``; comments and
    timestamps are dropped.
    """
    samples = {}
    for line in str(text).splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        series, sep, rest = line.rpartition('}') if '}' in line else ('', '', line)
        if sep:
            series, fields = series + sep, rest.split()
        else:
            fields = rest.split()
            series, fields = fields[0], fields[1:]
        if not fields:
            raise AnsibleFilterError('prometheus_samples: no value in %r' % line)
        try:
            samples[series] = float(fields[0])
        except ValueError:
            raise AnsibleFilterError('prometheus_samples: %r is not a number in %r' % (fields[0], line))
    return samples


def scrape_targets(hosts, hostvars, role, default_listen, secured=True):
    """The scrape targets of one exporter role on the given inventory hosts.

    Each host's port comes from its ``<role>_listen_address`` (else
    ``default_listen``, the role's default); the address scraped is its
    ``prometheus_scrape_host``, else its ``ansible_host``, else its name; the
    scheme is https when its ``web_config_enabled`` is on (and the exporter is
    one that the switch secures: ``secured``). Returns
    ``[{host, address, scheme}]`` in the order of ``hosts``.
    """
    targets = []
    for host in hosts:
        hv = hostvars[host]
        listen = str(hv.get(role + '_listen_address') or default_listen)
        port = listen.rsplit(':', 1)[-1]
        if not port.isdigit():
            raise AnsibleFilterError('scrape_targets: %s_listen_address of %s, %r, has no port' % (role, host, listen))
        name = str(hv.get('prometheus_scrape_host') or hv.get('ansible_host') or host)
        address = ('[%s]' % name if ':' in name else name) + ':' + port
        tls = secured and bool(hv.get('web_config_enabled'))
        targets.append(dict(host=host, address=address, scheme='https' if tls else 'http'))
    return targets


def packages_missing(names, packages):
    """The package names of `names` that `packages` (ansible_facts.packages,
    from gpuhpc.slurm.host_facts or package_facts) does not list; all of them when there are no package
    facts. A version (name=1.2, name-1.2 is not parsed) is ignored."""
    if isinstance(names, str):
        names = [names]
    if not packages:
        return list(names)
    return [n for n in names if str(n).split('=', 1)[0] not in packages]


# The unit file states that `systemctl is-enabled` answers with 0: the unit
# starts at boot, or cannot be enabled at all (static); both need no `enable`.
ENABLED_STATES = ('enabled', 'enabled-runtime', 'static', 'alias', 'indirect', 'generated', 'transient')


def service_running(name, services):
    """True when `services` (ansible_facts.services, from gpuhpc.slurm.host_facts
    or service_facts) shows the unit `name` running and enabled; False when it
    does not, or when there are no service facts (the start task then runs)."""
    if not services:
        return False
    unit = services.get(name if name.endswith('.service') else name + '.service') or {}
    return unit.get('state') == 'running' and unit.get('status') in ENABLED_STATES


def config_entries(paths, owner=None, group=None, mode=None, state=None, validate=None):
    """Entries of gpuhpc.slurm.config_files: a mapping of path to content
    gives files (each checked by `validate`, if given); a list of paths gives
    folders (or `state`, e.g. absent)."""
    attrs = dict((k, v) for k, v in (('owner', owner), ('group', group), ('mode', mode)) if v is not None)
    if isinstance(paths, dict):
        checked = dict(attrs, validate=validate) if validate else attrs
        return [dict(checked, path=path, content=content, state=state or 'file') for path, content in paths.items()]
    if isinstance(paths, str):
        raise AnsibleFilterError('config_entries: give a list of paths or a mapping of path to content, not a string')
    return [dict(attrs, path=path, state=state or 'directory') for path in paths]


def probe_address(listen_address):
    """Where a wait on the host reaches a service that listens on
    `listen_address`: {host, port, url_host}; 0.0.0.0 and an empty host
    become 127.0.0.1, :: becomes ::1."""
    try:
        return probe(listen_address)
    except ValueError as e:
        raise AnsibleFilterError('probe_address: %s' % e)


def failure_messages(result, label):
    """What a failed task said, as ``label: message`` lines: one per failed item
    of a loop, or the task's message; [] without a result (ansible_failed_result
    exists only on the host that ran the failed task)."""
    if not isinstance(result, dict):
        return []
    items = [r for r in result.get('results') or [] if isinstance(r, dict) and r.get('failed')]
    messages = [r.get('msg') for r in items if r.get('msg')] or [result.get('msg') or 'failed']
    return ['%s: %s' % (label, m if isinstance(m, str) else '; '.join(str(x) for x in m)) for m in messages]


def async_failures(hosts, hostvars, name):
    """The hosts among ``hosts`` whose async job, polled by async_status into
    the variable ``name``, did not end well: no result (the host left the
    play), unreachable, not finished, failed or a non-zero rc."""
    failed = []
    for host in hosts:
        result = (hostvars.get(host) or {}).get(name)
        if (not isinstance(result, dict) or result.get('unreachable') or not result.get('finished')
                or result.get('failed') or result.get('rc', 0) != 0):
            failed.append(host)
    return failed


def gpg_fingerprints(lines):
    """The primary keys' fingerprints (upper case) in ``gpg --with-colons --show-keys`` output: the first
    ``fpr`` record after each ``pub`` record (the others are subkeys')."""
    found, primary = [], False
    for line in lines or []:
        if line.startswith('pub:'):
            primary = True
        elif line.startswith('fpr:') and primary:
            fields = line.split(':')
            if len(fields) > 9:
                found.append(fields[9].upper())
            primary = False
    return found


def key_sha256(content_b64):
    """SHA-256 of an ASCII-armoured key (base64, as slurp gives it) without its ``Version:`` lines, which
    mirrors may rewrite."""
    import base64
    import hashlib
    import re
    text = base64.b64decode(content_b64 or '').decode('utf-8', 'replace')
    return hashlib.sha256(re.sub(r'(?m)^Version[^\n]*\n', '', text).encode('utf-8')).hexdigest()


class FilterModule(object):
    def filters(self):
        return {
            'async_failures': async_failures,
            'config_entries': config_entries,
            'failure_messages': failure_messages,
            'gpg_fingerprints': gpg_fingerprints,
            'inventory_problems': inventory_problems,
            'key_sha256': key_sha256,
            'munge_key_error': munge_key_error,
            'munge_problems': munge_problems,
            'packages_missing': packages_missing,
            'probe_address': probe_address,
            'prometheus_samples': prometheus_samples,
            'scrape_targets': scrape_targets,
            'service_running': service_running,
        }
