#!/usr/bin/env bash
# The slurm exporter against a real slurmctld that holds 20,000 jobs, on a
# running lab (make lab, or the lab name given): 20 held arrays of 1,000
# tasks (Slurm's default MaxArraySize is 1001; squeue -r lists each task),
# plus 300 one-CPU jobs, as many running as the lab's CPUs take and the rest
# pending. Prometheus is stopped meanwhile, so that slurmctld's RPC figures
# are the bench's scrapes alone. Prints:
#   - the scrape time (5 scrapes one after the other: median and max) against
#     the exporter's budget and Prometheus' scrape timeout;
#   - slurmctld's RPCs per scrape, by type, and the time slurmctld spent on
#     them (sdiag, before and after);
#   - the series count;
#   - 10 scrapes at once: their time, and how many command runs slurmctld
#     answered (single-flight: one).
# Cancels its jobs (named gpuhpc-bench) and starts Prometheus again afterwards. A time is printed,
# never asserted.
#   bench/slurm_exporter_lab.sh [LAB_NAME]
set -euo pipefail
lab=${1:-gpuhpc-lab}
ctl=$lab-ctl login=$lab-login monitor=$lab-monitor
url=http://127.0.0.1:9341/metrics
tmp=$(mktemp -d)
cleanup() {
  docker exec "$ctl" scancel -n gpuhpc-bench >/dev/null 2>&1 || true
  docker exec "$monitor" systemctl start prometheus >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

scrape() {  # seconds one scrape took, from the controller itself
  docker exec "$ctl" python3 -c "
import time, urllib.request
t = time.time(); body = urllib.request.urlopen('$url', timeout=60).read(); print('%.3f' % (time.time() - t))"
}
rpcs() {  # sdiag's RPC counts and total times by message type
  docker exec "$ctl" sdiag | sed -n '/by message type/,/by user/p' | grep '(' >"$1"
}

# Every task of an array counts against MaxJobCount (10,000 by default): a site that holds 20,000
# jobs has raised it; so must the lab (site.yml -e '{"slurm_conf_extra": {"MaxJobCount": 50000}}').
max_jobs=$(docker exec "$ctl" scontrol show config | awk '$1 == "MaxJobCount" {print $3}')
if (( max_jobs < 25000 )); then
  echo "bench/slurm_exporter_lab.sh: slurmctld's MaxJobCount is $max_jobs, too few for 20,000 array tasks and" \
       "300 jobs: set slurm_conf_extra: {MaxJobCount: 50000} for the lab and run site.yml" >&2
  exit 2
fi
docker exec "$monitor" systemctl stop prometheus
echo "submitting 20 held arrays of 1000 tasks (nora) and 300 one-CPU jobs (vic)"
docker exec "$login" runuser -u nora -- bash -c \
  'cd /tmp && for i in $(seq 20); do sbatch -J gpuhpc-bench -H --array=0-999 -o /dev/null --wrap true >/dev/null; done'
docker exec "$login" runuser -u vic -- bash -c \
  'cd /tmp && for i in $(seq 300); do sbatch -J gpuhpc-bench -n1 -o /dev/null --wrap "sleep 900" >/dev/null; done'
sleep 10
jobs=$(docker exec "$ctl" squeue -h -a -r -t all -o %i | wc -l)
running=$(docker exec "$ctl" squeue -h -a -r -t running -o %i | wc -l)
echo "slurmctld holds $jobs jobs (squeue -r), $running running"

scrape >/dev/null  # the first scrape after a quiet spell
rpcs "$tmp/before"
for _ in 1 2 3 4 5; do scrape; done >"$tmp/times"
rpcs "$tmp/after"
docker exec "$ctl" python3 -c "import urllib.request;print(urllib.request.urlopen('$url', timeout=60).read().decode())" >"$tmp/metrics"

rpcs "$tmp/before10"
for _ in $(seq 10); do scrape >>"$tmp/times10" & done
wait
rpcs "$tmp/after10"

python3 - "$tmp" "$jobs" <<'PY'
import re, statistics, sys
tmp, jobs = sys.argv[1], int(sys.argv[2])
def rpcs(name):
    out = {}
    for line in open('%s/%s' % (tmp, name)):
        m = re.match(r'\s*(\S+)\s+\(\s*\d+\)\s+count:(\d+)\s+ave_time:\d+\s+total_time:(\d+)', line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out
def diff(a, b):
    before, after = rpcs(a), rpcs(b)
    out = {k: (v[0] - before.get(k, (0, 0))[0], v[1] - before.get(k, (0, 0))[1]) for k, v in after.items()}
    # the bench's own sdiag (the "before" one) is not the exporter's
    count, total = out.get('REQUEST_STATS_INFO', (1, 0))
    out['REQUEST_STATS_INFO'] = (count - 1, total)
    return {k: v for k, v in out.items() if v[0] > 0}
times = [float(x) for x in open(tmp + '/times').read().split()]
times10 = [float(x) for x in open(tmp + '/times10').read().split()]
metrics = open(tmp + '/metrics').read()
budget = re.search(r'^slurm_exporter_scrape_budget_seconds (\S+)', metrics, re.M)
series = [l for l in metrics.splitlines() if l and not l.startswith('#')]
print('| figure | value |')
print('|---|---|')
print('| jobs slurmctld holds (squeue -r -t all) | %d |' % jobs)
print('| scrape time, 5 in a row: median / max | %.2f s / %.2f s |' % (statistics.median(times), max(times)))
print("| the exporter's budget / Prometheus' scrape timeout | %s s / 10 s |" % (budget.group(1) if budget else '?'))
print('| series in one scrape | %d |' % len(series))
for name, (count, total) in sorted(diff('before', 'after').items()):
    print('| %s per scrape: RPCs, slurmctld time | %.1f, %.1f ms |' % (name, count / 5.0, total / 5000.0))
ten = diff('before10', 'after10')
print('| 10 scrapes at once: slowest | %.2f s |' % max(times10))
print('| 10 scrapes at once: REQUEST_JOB_INFO RPCs (single-flight: 1) | %d |' % ten.get('REQUEST_JOB_INFO', (0, 0))[0])
PY
