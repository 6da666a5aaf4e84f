#!/usr/bin/env bash
# Time from a fault on a GPU node to the page reaching someone: on a running
# lab (make lab, or the lab name given), slurmd on the last GPU node is
# stopped (systemctl stop), then frozen (SIGSTOP: the process is there, its
# unit active, it answers nothing), and the lab's webhook receiver
# (molecule/default/files/webhook_sink.py at 127.0.0.1:9099, where
# inventory/lab's Alertmanager sends) is watched for the node's firing
# SlurmNodeNotResponding or SlurmNodeDown. Prints the seconds from each fault
# to its delivery. Between the two, slurmd comes back, the alert resolves and
# Alertmanager is restarted, so that the second page is not held back by the
# first one's group (group_interval). Each time is split where Slurm flags the
# node (sinfo, every 2 s): Slurm's share (its ping, every SlurmdTimeout/3, to
# a node that has not answered for as long) and the monitoring's (a scrape,
# the rule's for:, Alertmanager's group_wait). Times are printed, never
# asserted.
#   bench/page_time.sh [LAB_NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${1:-gpuhpc-lab}
ctl=$lab-ctl monitor=$lab-monitor
node=$(docker ps --format '{{.Names}}' | sed -n "s/^$lab-\(gpu-[0-9]*\)$/\1/p" | sort | tail -n 1)
[[ -n $node ]] || { echo "bench/page_time.sh: no GPU node of a lab named $lab is running" >&2; exit 2; }
sink=/var/tmp/gpuhpc-bench-alerts.jsonl

restore() {
  docker exec "$lab-$node" systemctl kill -s SIGCONT slurmd >/dev/null 2>&1 || true
  docker exec "$lab-$node" systemctl start slurmd >/dev/null 2>&1 || true
  docker exec "$monitor" systemctl stop gpuhpc-bench-sink >/dev/null 2>&1 || true
}
trap restore EXIT

docker cp -q molecule/default/files/webhook_sink.py "$monitor:/var/tmp/gpuhpc-bench-sink.py"
docker exec "$monitor" systemctl stop gpuhpc-webhook-sink gpuhpc-bench-sink >/dev/null 2>&1 || true
docker exec "$monitor" systemd-run --unit gpuhpc-bench-sink --collect \
  python3 /var/tmp/gpuhpc-bench-sink.py 127.0.0.1:9099 "$sink" >/dev/null

delivered() {  # whether the sink holds the node's firing page, of an alert that started after $1 (epoch)
  docker exec -i "$monitor" python3 - "$sink" "$node" "$1" <<'PY'
import datetime, json, sys
sink, node, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    lines = open(sink).read().splitlines()
except OSError:
    sys.exit(1)
for line in lines:
    for a in json.loads(line)['alerts']:
        began = datetime.datetime.fromisoformat(a['startsAt'][:19]).replace(tzinfo=datetime.timezone.utc).timestamp()
        if (a['status'] == 'firing' and a['labels'].get('alertname') in ('SlurmNodeNotResponding', 'SlurmNodeDown')
                and node in (a['labels'].get('instance'), a['labels'].get('node')) and began >= start - 1):
            sys.exit(0)
sys.exit(1)
PY
}
firing() {  # whether Prometheus has the node's page pending or firing
  docker exec -i "$monitor" python3 - "$node" <<'PY'
import json, sys, urllib.parse, urllib.request
query = 'ALERTS{alertname=~"SlurmNodeNotResponding|SlurmNodeDown",instance="%s"}' % sys.argv[1]
answer = json.load(urllib.request.urlopen('http://127.0.0.1:9090/api/v1/query?query=' + urllib.parse.quote(query)))
sys.exit(0 if answer['data']['result'] else 1)
PY
}

measure() {  # fault name, the command that makes it, on the node
  local start now flagged=""
  docker exec "$monitor" rm -f "$sink"
  start=$(date +%s)
  docker exec "$lab-$node" "${@:2}"
  until delivered "$start"; do
    now=$(date +%s)
    (( now - start < 900 )) || { echo "$1: no page within 900 s" >&2; return 1; }
    # when Slurm flags the node: not responding (state ending in *) or DOWN
    if [[ -z $flagged ]] && docker exec "$ctl" sinfo -h -N -n "$node" -o %t | grep -Eq '[*]$|^down'; then
      flagged=$(( now - start ))
    fi
    sleep 2
  done
  now=$(date +%s)
  echo "| slurmd $1 on $node | ${flagged:-?} s | $(( now - start - ${flagged:-0} )) s | $(( now - start )) s |"
}

settle() {  # slurmd back, the node in service, the page gone, Alertmanager fresh
  local state
  docker exec "$lab-$node" "$@"
  for _ in $(seq 90); do
    state=$(docker exec "$ctl" sinfo -h -N -n "$node" -o %T | head -n 1)
    [[ $state == down* ]] && docker exec "$ctl" scontrol update nodename="$node" state=resume
    [[ $state =~ ^(idle|mixed|allocated)$ ]] && ! firing && break
    sleep 5
  done
  docker exec "$monitor" systemctl restart prometheus-alertmanager
  sleep 5
}

settle true  # no page of the node open, Alertmanager fresh
echo "| fault | fault to Slurm's flag | flag to webhook | fault to webhook |"
echo "|---|---|---|---|"
measure stopped systemctl stop slurmd
settle systemctl start slurmd
measure "frozen (SIGSTOP)" systemctl kill -s SIGSTOP slurmd
settle systemctl kill -s SIGCONT slurmd
