#!/usr/bin/env bash
# `make lab`: a Docker engine, the lab containers, then site.yml against them,
# and a short summary. A second run reuses the image and containers.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

tools/engine.sh
tools/deps.sh
# shellcheck disable=SC1091
source .venv/bin/activate

name=${GPUHPC_LAB_NAME:-gpuhpc-lab}
inventory=${GPUHPC_LAB_INVENTORY:-inventory/lab}
state=.lab/$name
mkdir -p "$state"
export ANSIBLE_CALLBACK_PLUGINS=$PWD/lab/callback_plugins
export ANSIBLE_CALLBACKS_ENABLED=lab_summary

echo "[lab] containers (lab/up.yml)"
GPUHPC_LAB_SUMMARY=$state/up-run.json ansible-playbook -i "$inventory" lab/up.yml
echo "[lab] site.yml"
rc=0
GPUHPC_LAB_SUMMARY=$state/site-run.json ansible-playbook -i "$inventory" site.yml "$@" || rc=$?
python3 lab/summary.py "$state/site-run.json" "$start" || true
exit "$rc"
