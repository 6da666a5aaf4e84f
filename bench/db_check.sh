#!/usr/bin/env bash
# Wall time of one full database check (what gpuhpc.slurm.slurmdbd_db_check
# does: read the release with slurmdbd -V, connect with TLS, run its queries,
# judge) from the lab's controller against the lab's dbaas; 20 checks, then
# one module run through Ansible for comparison. Target: under 1 s.
# Needs a running lab (make lab).
#   bench/db_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
lab=${GPUHPC_LAB_NAME:-gpuhpc-lab}
ctl=$lab-ctl
docker inspect "$ctl" >/dev/null 2>&1 || { echo "bench/db_check.sh: no lab '$lab' runs here; run make lab first" >&2; exit 1; }
tools/deps.sh
vars=inventory/lab/group_vars/all/dbaas.yml
lab_var() { .venv/bin/python -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))[sys.argv[2]])' "$vars" "$1"; }
user=$(lab_var lab_dbaas_user) password=$(lab_var lab_dbaas_password) db=$(lab_var lab_dbaas_database)

docker exec "$ctl" mkdir -p /var/tmp/gpuhpc-bench
docker cp -q plugins/module_utils/dbcheck.py "$ctl:/var/tmp/gpuhpc-bench/dbcheck.py"
docker exec -i -e DB_USER="$user" -e DB_PASSWORD="$password" -e DB_NAME="$db" "$ctl" python3 - <<'PY'
import os, statistics, subprocess, sys, time
sys.path.insert(0, '/var/tmp/gpuhpc-bench')
import dbcheck

params = dict(login_host='dbaas', login_port=3306, login_user=os.environ['DB_USER'],
              login_password=os.environ['DB_PASSWORD'], ca_cert='/etc/slurm/slurmdbd-ca.pem',
              check_hostname=True, connect_timeout=10)
times = []
for run in range(20):
    t0 = time.perf_counter()
    release = dbcheck.parse_release(subprocess.run(['slurmdbd', '-V'], capture_output=True, text=True,
                                                   check=True).stdout)
    conn = dbcheck.connect(params)
    facts = dbcheck.inspect(conn, os.environ['DB_NAME'])
    conn.close()
    result = dbcheck.evaluate(facts, True, release, cluster_name='gpulab')
    times.append(time.perf_counter() - t0)
print('db check, 20 runs from ctl to dbaas (TLS): median %.0f ms, max %.0f ms; schema %s, action %s, %d problem(s)'
      % (statistics.median(times) * 1000, max(times) * 1000, result['schema']['state'],
         result['schema']['action'], len(result['problems'])))
PY
docker exec "$ctl" rm -rf /var/tmp/gpuhpc-bench

t0=$(date +%s.%N)
GPUHPC_LAB_NAME=$lab .venv/bin/ansible -i inventory/lab ctl -o -m gpuhpc.slurm.slurmdbd_db_check \
  -a "login_host=dbaas login_user=$user login_password=$password login_db=$db ca_cert=/etc/slurm/slurmdbd-ca.pem" \
  >/dev/null
t1=$(date +%s.%N)
python3 -c 'import sys; print("the module through Ansible (ad-hoc, incl. its overhead): %.2f s" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t0" "$t1"
