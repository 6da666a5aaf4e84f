#!/usr/bin/env bash
# Install what the lab and the tests need: a Python virtual environment in
# .venv with the pinned tools of requirements-dev.txt, and a link that makes
# this checkout resolvable as the collection gpuhpc.slurm.
# Reruns are cheap: the venv is rebuilt only when requirements-dev.txt changes.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[deps] %s\n' "$*" >&2; }
die() { printf '[deps] ERROR: %s\n' "$*" >&2; exit 1; }

PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || die "python3 not found: install it (apt-get install python3 python3-venv)."
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "Python >= 3.11 is needed for ansible-core 2.19; found $("$PYTHON" --version)."

if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-venv"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  else
    die "the Python venv module is missing: apt-get install python3-venv"
  fi
fi

stamp=.venv/.requirements.sha256
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  log "creating .venv with the pinned tools (requirements-dev.txt)"
  rm -rf .venv
  "$PYTHON" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check --upgrade pip >/dev/null
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt 2>&1 \
    | grep -v -e '^WARNING: Location' || true
  .venv/bin/ansible --version >/dev/null || die "ansible did not install into .venv"
  echo "$want" >"$stamp"
fi

# Make the checkout resolvable as gpuhpc.slurm from the repo root (ansible.cfg
# puts .collections first on collections_path).
mkdir -p .collections/ansible_collections/gpuhpc
ln -sfn ../../.. .collections/ansible_collections/gpuhpc/slurm
