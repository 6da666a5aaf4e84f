"""Print the short summary `make lab` ends with.

    python3 lab/summary.py RUN_JSON START_EPOCH
RUN_JSON is what the lab_summary callback wrote for the site.yml run;
START_EPOCH the time `make lab` started.
"""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request


def answers(url):
    """True when an HTTP server answers at url (any status)."""
    try:
        urllib.request.urlopen(url, timeout=3)
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False
    return True


def published_lines(ports, answering):
    """The summary's lines for the published ports: the URLs that answer, and
    one line naming the services that do not (Grafana is not installed where
    its repository cannot be reached), without a URL that leads nowhere."""
    up = [p for p in ports if answering(p['url'])]
    down = [p['service'] for p in ports if p not in up]
    lines = ['published on 127.0.0.1:'] if up else []
    lines += ['  %-10s %s' % (p['service'], p['url']) for p in up]
    if down:
        lines.append('not answering, so not listed: %s (not installed, or not up)' % ', '.join(down))
    return lines


def main():
    run_json, seconds = sys.argv[1], time.time() - float(sys.argv[2])
    with open(run_json) as f:
        run = json.load(f)
    inventory = json.loads(subprocess.check_output(
        ['ansible-inventory', '-i', 'inventory/lab', '--list'], stderr=subprocess.DEVNULL))
    hostvars = inventory.get('_meta', {}).get('hostvars', {})
    lab_name = os.environ.get('GPUHPC_LAB_NAME') or 'gpuhpc-lab'

    groups_of = {}
    for group, data in inventory.items():
        for host in data.get('hosts', []) if isinstance(data, dict) else []:
            groups_of.setdefault(host, []).append(group)

    changed = sum(h.get('changed', 0) for h in run['hosts'].values())
    failed = sum(h.get('failures', 0) + h.get('unreachable', 0) for h in run['hosts'].values())
    print('')
    print('== lab %s: %s in %.0f s ==' % (lab_name, 'FAILED' if failed else 'up', seconds))
    print('hosts:')
    for host in sorted(groups_of):
        print('  %-8s %-20s container %s-%s' % (host, ','.join(sorted(groups_of[host])), lab_name, host))
    print('roles applied: %s' % (', '.join(run['roles']) or 'none'))
    print('site.yml changed: %d task(s) over %d host(s)' % (changed, len(run['hosts'])))
    urls = [p for h in sorted(hostvars) for p in hostvars[h].get('lab_published_ports', [])]
    if urls and os.environ.get('GPUHPC_LAB_PUBLISH', 'true').lower() in ('true', '1', 'yes'):
        print('\n'.join(published_lines(urls, answers)))
    print('shell into a host: docker exec -it %s-ctl bash' % lab_name)
    print('remove the lab:    make lab-down')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
