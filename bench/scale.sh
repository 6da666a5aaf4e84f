#!/usr/bin/env bash
# The cost of site.yml at N GPU nodes: a lab of login, controller, N GPU
# nodes, monitoring host (and the database stand-in), nothing else beside it.
# Prints the first converge's time, the no-op rerun's time and changed count,
# the rerun's seconds per role and its tasks per host class (remote: a module
# ran on the host; controller: set_fact, assert and the like; skipped), then
# removes that lab. A time is printed, never asserted.
#   bench/scale.sh 12          (make bench-scale runs 12, then 48)
#   GPUHPC_LAB_SUITE=bookworm bench/scale.sh 12
#   GPUHPC_BENCH_PROFILE=1 bench/scale.sh 48   (then a third, profiled rerun:
#   where the controller's Ansible process spends its time; cProfile slows
#   that run, so its time is not the rerun's)
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:?usage: bench/scale.sh NUMBER_OF_GPU_NODES (2 or more)}
[[ $nodes =~ ^[0-9]+$ && $nodes -ge 2 ]] || { echo "bench/scale.sh: give 2 or more GPU nodes, not '$nodes'" >&2; exit 2; }
export GPUHPC_LAB_NAME=gpuhpc-scale
export GPUHPC_LAB_SUITE=${GPUHPC_LAB_SUITE:-trixie}
export GPUHPC_LAB_PUBLISH=false
log=${TMPDIR:-/tmp}/gpuhpc-bench-scale-$nodes

tools/engine.sh
tools/deps.sh
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CALLBACK_PLUGINS=$PWD/lab/callback_plugins
export ANSIBLE_CALLBACKS_ENABLED=lab_summary

# gpu-01 and gpu-02 are inventory/lab's; the others are added here (outside
# .lab/<name>, which lab/down.yml removes).
extra=$log-hosts.yml
{
  echo "all:"
  echo "  children:"
  echo "    slurm_compute:"
  echo "      hosts:"
  for i in $(seq 3 "$nodes"); do
    printf '        gpu-%02d:\n          ansible_host: "{{ lab_name }}-gpu-%02d"\n' "$i" "$i"
  done
} >"$extra"
inv=(-i inventory/lab -i "$extra")
count=$(ANSIBLE_INVENTORY_UNPARSED_FAILED=true ansible-inventory "${inv[@]}" --list \
        | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["slurm_compute"]["hosts"]))')
[[ $count -eq $nodes ]] || { echo "bench/scale.sh: the inventory has $count GPU nodes, not $nodes" >&2; exit 1; }
down() { ansible-playbook "${inv[@]}" lab/down.yml >/dev/null; }
trap 'echo "bench/scale.sh: a run failed; see $log-*.log" >&2' ERR

# systemd in each container takes inotify instances; at the kernel's default
# of 128 per user, about 25 lab containers boot and the others restart in a
# loop. The lab's hosts are N + 4.
need=$(( (nodes + 4) * 8 ))
have=$(sysctl -n fs.inotify.max_user_instances)
if (( have < need )); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "bench/scale.sh: fs.inotify.max_user_instances $have -> $need (systemd in $((nodes + 4)) containers)"
    sysctl -qw fs.inotify.max_user_instances="$need"
  else
    echo "bench/scale.sh: fs.inotify.max_user_instances is $have; $((nodes + 4)) systemd containers need $need:" \
         "run sysctl -w fs.inotify.max_user_instances=$need as root" >&2
    exit 1
  fi
fi

down
ansible-playbook "${inv[@]}" lab/up.yml >"$log-up.log" 2>&1
t0=$(date +%s.%N)
GPUHPC_LAB_SUMMARY=$log-first.json ansible-playbook "${inv[@]}" site.yml >"$log-first.log" 2>&1
t1=$(date +%s.%N)
GPUHPC_LAB_SUMMARY=$log-rerun.json ansible-playbook "${inv[@]}" site.yml >"$log-rerun.log" 2>&1
t2=$(date +%s.%N)
if [[ -n ${GPUHPC_BENCH_PROFILE:-} ]]; then
  python -m cProfile -o "$log-profiled.prof" "$(command -v ansible-playbook)" "${inv[@]}" site.yml >"$log-profiled.log" 2>&1
fi
down
trap - ERR

python3 - "$nodes" "$t0" "$t1" "$t2" "$log-first.json" "$log-rerun.json" <<'PY'
import json
import sys

nodes, t0, t1, t2 = int(sys.argv[1]), *map(float, sys.argv[2:5])
first, rerun = (json.load(open(p)) for p in sys.argv[5:7])
changed = lambda run: sum(h['changed'] for h in run['hosts'].values())
print('GPU nodes:                %d (hosts: %d)' % (nodes, len(rerun['hosts']) - 1))
print('first converge:           %6.1f s (changed %d)' % (t1 - t0, changed(first)))
print('no-op rerun:              %6.1f s (changed %d)' % (t2 - t1, changed(rerun)))
print('rerun, seconds per role (wall, as profile_roles counts):')
for role, seconds in sorted(rerun['role_seconds'].items(), key=lambda r: -r[1]):
    print('  %-32s %6.1f' % (role, seconds))
print('rerun, tasks per host      remote  controller  skipped')
for cls, host in (('login', 'login'), ('controller', 'ctl'), ('GPU node', 'gpu-01'), ('monitoring', 'monitor')):
    t = rerun['tasks'][host]
    print('  %-22s %8d %11d %8d' % (cls + ' (' + host + ')', t['remote'], t['controller'], t['skipped']))
sys.exit(1 if changed(rerun) else 0)
PY
[[ -z ${GPUHPC_BENCH_PROFILE:-} ]] || python3 bench/controller_profile.py "$log-profiled.prof"
