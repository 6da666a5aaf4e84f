#!/usr/bin/env bash
# The verify play's wall time on a running lab (make lab), and what
# Prometheus says of its own scraping there: targets per scrape pool
# (prometheus_target_scrape_pool_targets) and each target's last scrape
# duration (scrape_duration_seconds).
#   bench/verify.sh
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${GPUHPC_LAB_NAME:-gpuhpc-lab}
monitor=$lab-monitor
docker inspect "$monitor" >/dev/null 2>&1 || { echo "bench/verify.sh: no lab '$lab' runs here; run make lab first" >&2; exit 1; }
tools/deps.sh
# shellcheck disable=SC1091
source .venv/bin/activate

mkdir -p .cache
t0=$(date +%s%N)
ansible-playbook -i inventory/lab playbooks/verify.yml >.cache/bench-verify.log 2>&1 \
  || { tail -30 .cache/bench-verify.log; echo "bench/verify.sh: the verify play failed (log: .cache/bench-verify.log)" >&2; exit 1; }
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
printf 'verify play on the lab: %d.%d s wall (log: .cache/bench-verify.log)\n' $((ms / 1000)) $((ms % 1000 / 100))

docker exec -i "$monitor" python3 - <<'PY'
import json, urllib.parse, urllib.request

def query(expr):
    url = 'http://127.0.0.1:9090/api/v1/query?' + urllib.parse.urlencode({'query': expr})
    return json.load(urllib.request.urlopen(url))['data']['result']

print('targets per scrape pool (prometheus_target_scrape_pool_targets):')
for r in sorted(query('prometheus_target_scrape_pool_targets'), key=lambda r: r['metric']['scrape_job']):
    print('  %-12s %s' % (r['metric']['scrape_job'], r['value'][1]))
print('last scrape duration per target (scrape_duration_seconds):')
for r in sorted(query('scrape_duration_seconds'), key=lambda r: (r['metric']['job'], r['metric']['instance'])):
    print('  %-12s %-10s %6.1f ms' % (r['metric']['job'], r['metric']['instance'], float(r['value'][1]) * 1000))
PY
