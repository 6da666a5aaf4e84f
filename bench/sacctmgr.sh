#!/usr/bin/env bash
# The org chart of the issue: 10 QoS, 50 accounts (5 departments of 9 teams)
# and 1000 users, applied from nothing and again unchanged, against the lab's
# real slurmdbd, the way gpuhpc.slurm.sacctmgr_org does it (read, plan, apply;
# run on the lab's controller, without Ansible's own overhead). Then the naive
# way for comparison: one sacctmgr per entity, as shell loops do it. Prints
# wall seconds and sacctmgr invocations of each; removes what it added.
# Needs a running lab (make lab).
#   bench/sacctmgr.sh
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${GPUHPC_LAB_NAME:-gpuhpc-lab}
ctl=$lab-ctl
docker inspect "$ctl" >/dev/null 2>&1 || { echo "bench/sacctmgr.sh: no lab '$lab' runs here; run make lab first" >&2; exit 1; }
# the collection's sacctmgr code, importable as the modules import it
utils=/var/tmp/gpuhpc-bench/ansible_collections/gpuhpc/slurm/plugins/module_utils
docker exec "$ctl" mkdir -p "$utils"
for f in command sacctmgr_run sacctmgr_values sacctmgr_read sacctmgr_plan; do
  docker cp -q "plugins/module_utils/$f.py" "$ctl:$utils/$f.py"
done
docker exec -i "$ctl" python3 - <<'PY'
import subprocess, sys, time
sys.path.insert(0, '/var/tmp/gpuhpc-bench')
from ansible_collections.gpuhpc.slurm.plugins.module_utils import sacctmgr_plan, sacctmgr_read, sacctmgr_run

qos = [dict(name='bench-q%d' % i, priority=i, max_tres_per_user={'gres/gpu': 1 + i % 4}, max_wall='2-00:00:00')
       for i in range(10)]
accounts = [dict(name='bench-d%d' % d, fairshare=100) for d in range(5)]
accounts += [dict(name='bench-t%02d' % t, parent='bench-d%d' % (t % 5), fairshare=10, grp_tres={'gres/gpu': 8},
                  qos=['normal', 'bench-q%d' % (t % 10)]) for t in range(45)]
users = [dict(name='bu%04d' % u, default_account='bench-t%02d' % (u % 45)) for u in range(1000)]


def engine():
    runner = sacctmgr_run.Runner()
    t0 = time.time()
    state = sacctmgr_read.read_state(runner, 'gpulab', need_tres=True)
    plan = sacctmgr_plan.plan_all(state, qos, accounts, users)
    sacctmgr_run.apply(runner, plan)
    return time.time() - t0, runner.calls, len(plan.changes)


def sacctmgr_cmd(*args):
    subprocess.run(('sacctmgr',) + args, stdin=subprocess.DEVNULL, capture_output=True, check=False)


def cleanup():
    sacctmgr_cmd('-i', 'delete', 'user', 'where', 'name=' + ','.join(u['name'] for u in users))
    sacctmgr_cmd('-i', 'delete', 'account', 'where', 'name=' + ','.join(a['name'] for a in accounts[5:]))
    sacctmgr_cmd('-i', 'delete', 'account', 'where', 'name=' + ','.join(a['name'] for a in accounts[:5]))
    sacctmgr_cmd('-i', 'delete', 'qos', 'where', 'name=' + ','.join(q['name'] for q in qos))


def naive_first():
    calls, t0 = 0, time.time()
    for q in qos:
        sacctmgr_cmd('-i', 'add', 'qos', 'name=' + q['name'], 'priority=%d' % q['priority'],
                     'maxtresperuser=gres/gpu=%d' % q['max_tres_per_user']['gres/gpu'], 'maxwall=2-00:00:00')
        calls += 1
    for a in accounts:
        args = ['-i', 'add', 'account', 'name=' + a['name'], 'cluster=gpulab', 'parent=' + a.get('parent', 'root'),
                'fairshare=%d' % a['fairshare']]
        if 'qos' in a:
            args += ['grptres=gres/gpu=8', 'qos=' + ','.join(a['qos'])]
        sacctmgr_cmd(*args)
        calls += 1
    for u in users:
        sacctmgr_cmd('-i', 'add', 'user', 'name=' + u['name'], 'cluster=gpulab', 'account=' + u['default_account'])
        calls += 1
    return time.time() - t0, calls


def naive_again():
    # what a loop that checks before it adds does on an unchanged chart
    calls, t0 = 0, time.time()
    for q in qos:
        sacctmgr_cmd('-nP', 'show', 'qos', 'where', 'name=' + q['name'], 'format=Name,Priority,MaxTRESPU,MaxWall')
        calls += 1
    for a in accounts:
        sacctmgr_cmd('-nP', 'show', 'assoc', 'where', 'account=' + a['name'], 'user=', 'cluster=gpulab',
                     'format=Account,ParentName,Fairshare,GrpTRES,QOS')
        calls += 1
    for u in users:
        sacctmgr_cmd('-nP', 'show', 'assoc', 'where', 'user=' + u['name'], 'cluster=gpulab', 'format=User,Account')
        calls += 1
    return time.time() - t0, calls


cleanup()
first = engine()
again = engine()
cleanup()
n_first = naive_first()
n_again = naive_again()
cleanup()
print('org chart: %d QoS, %d accounts, %d users (lab slurmdbd, %s)'
      % (len(qos), len(accounts), len(users),
         subprocess.run(['sacctmgr', '--version'], capture_output=True, text=True).stdout.strip()))
print('%-34s %8s %10s' % ('', 'seconds', 'sacctmgr'))
print('%-34s %8.1f %10d' % ('batched, first apply', first[0], first[1]))
print('%-34s %8.1f %10d' % ('batched, unchanged re-apply', again[0], again[1]))
print('%-34s %8.1f %10d' % ('naive (one per entity), first', n_first[0], n_first[1]))
print('%-34s %8.1f %10d' % ('naive (one per entity), re-check', n_again[0], n_again[1]))
print('re-apply changes: %d (must be 0)' % again[2])
PY
docker exec "$ctl" rm -rf /var/tmp/gpuhpc-bench
