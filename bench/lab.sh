#!/usr/bin/env bash
# How long `make lab` takes from nothing (base image build included) and the
# second time, how long site.yml took in each, and what the second run
# changed (must be 0).
# Runs under its own lab name, unpublished, so a `make lab` cluster is left
# alone; it does remove the cached base image of the suite to start from
# nothing (the first run rebuilds it).
#   bench/lab.sh            Debian 13
#   GPUHPC_LAB_SUITE=bookworm bench/lab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GPUHPC_LAB_NAME=${GPUHPC_LAB_NAME:-gpuhpc-bench}
export GPUHPC_LAB_SUITE=${GPUHPC_LAB_SUITE:-trixie}
export GPUHPC_LAB_PUBLISH=false
state=.lab/$GPUHPC_LAB_NAME

tools/engine.sh
tools/deps.sh
down() { .venv/bin/ansible-playbook -i inventory/lab lab/down.yml >/dev/null; }
seconds() { .venv/bin/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' "$1"; }
changed() { .venv/bin/python -c 'import json, sys; print(sum(h["changed"] for f in sys.argv[1:] for h in json.load(open(f))["hosts"].values()))' "$@"; }

trap 'echo "bench/lab.sh: a make lab run failed; see ${TMPDIR:-/tmp}/gpuhpc-bench-*.log" >&2' ERR
down
docker image rm -f "gpuhpc-lab/debian:$GPUHPC_LAB_SUITE" >/dev/null 2>&1 || true

t0=$(date +%s.%N)
tools/lab.sh >"${TMPDIR:-/tmp}/gpuhpc-bench-first.log" 2>&1
t1=$(date +%s.%N)
first_changed=$(changed "$state/up-run.json" "$state/site-run.json")
first_site=$(seconds "$state/site-run.json")
tools/lab.sh >"${TMPDIR:-/tmp}/gpuhpc-bench-second.log" 2>&1
t2=$(date +%s.%N)
second_changed=$(changed "$state/up-run.json" "$state/site-run.json")
second_site=$(seconds "$state/site-run.json")
down

python3 - "$t0" "$t1" "$t2" "$first_changed" "$second_changed" "$first_site" "$second_site" <<'PY'
import sys
t0, t1, t2 = map(float, sys.argv[1:4])
print("suite:                            %s" % __import__("os").environ["GPUHPC_LAB_SUITE"])
print("make lab from nothing:            %6.1f s (changed %s)" % (t1 - t0, sys.argv[4]))
print("  of which site.yml, first run:   %6.1f s" % float(sys.argv[6]))
print("make lab again:                   %6.1f s (%.0f%% of the first)" % (t2 - t1, 100 * (t2 - t1) / (t1 - t0)))
print("  of which site.yml, no-op rerun: %6.1f s" % float(sys.argv[7]))
print("changed on the second run:        %s" % sys.argv[5])
PY
[[ $second_changed -eq 0 ]]
