#!/usr/bin/env bash
# `make test`: every stage runs, each reports PASS or FAIL, and the last line
# sums them up. Exit status is non-zero when any stage failed.
#   tools/test.sh                 all stages
#   tools/test.sh unit molecule   only those
#   stages: lint galaxy sanity unit integration molecule
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

all=(lint galaxy sanity unit integration molecule)
stages=("${@:-${all[@]}}")
read -ra scenarios <<<"${GPUHPC_MOLECULE_SCENARIOS:-default debian12}"

tools/deps.sh || { echo "make test: could not install the tools (tools/deps.sh)"; exit 1; }
# shellcheck disable=SC1091
source .venv/bin/activate

stage_lint()       { yamllint -s . && ansible-lint --nocolor; }
# what Galaxy checks: the docs lint (antsibull-docs) and the import of the tarball
stage_galaxy()     { tools/galaxy.sh; }
# ansible-test's shell script test needs shellcheck: without it, it passes having checked nothing
prepare_sanity()   { need_packages shellcheck:shellcheck; }
# on the lowest and the newest ansible-core of the claimed range (tests/ansible-cores.txt)
stage_sanity() {
  local core rc=0
  while read -r core; do
    [[ -z $core || $core == \#* ]] && continue
    echo "--- ansible-test sanity, $core"
    GPUHPC_CORE=$core tools/sanity.sh || rc=1
  done <tests/ansible-cores.txt
  return $rc
}
# on .venv's ansible-core, then on each of tests/ansible-cores.txt
stage_unit()       { pytest -q -p no:cacheprovider tests/unit && tools/cores.sh; }
# What a stage installs (apt) comes first, one stage after the other: the
# stages themselves may then run side by side.
prepare_integration() {
  # The database check is tested against a MariaDB server the tests start
  # themselves: Debian's server and client binaries, no service; the alert
  # rules with promtool.
  # promtool for the alert rules' tests: its own package on Debian 13, part of prometheus before.
  local promtool=prometheus
  apt-cache show promtool >/dev/null 2>&1 && promtool=promtool
  need_packages mariadbd:mariadb-server-core mariadb:mariadb-client-core openssl:openssl "promtool:$promtool"
}
stage_integration() {
  pytest -q -p no:cacheprovider tests/integration
}
prepare_molecule() { tools/engine.sh; }
# Each molecule step line gets the time it was printed (tools/digest.py steps).
stamp() {
  local line
  while IFS= read -r line; do
    [[ $line == *"➜"* ]] && line="@$(printf '%(%s)T' -1) $line"
    printf '%s\n' "$line"
  done
}
# The scenarios run side by side (each lab has a name of its own, and they
# mostly wait on their daemons); each one's output follows when all ended.
stage_molecule() {
  local s i ok rc=0 log pids=()
  mkdir -p .cache
  for s in "${scenarios[@]}"; do
    ( molecule test -s "$s" 2>&1 | stamp >".cache/molecule-$s.log"; exit "${PIPESTATUS[0]}" ) &
    pids+=("$!")
  done
  for i in "${!scenarios[@]}"; do
    s=${scenarios[$i]}
    log=.cache/molecule-$s.log
    wait "${pids[$i]}"; ok=$?
    echo "--- molecule scenario $s"
    cat "$log"
    if [[ $ok -ne 0 ]]; then
      echo "--- molecule scenario $s: FAILED"
      { echo "molecule scenario $s failed (full log: $log):"; python3 tools/digest.py failed "$log"; } >>.cache/failures.txt
      rc=1
    fi
    echo "--- molecule scenario $s, seconds per step: $(python3 tools/digest.py steps "$log")"
  done
  return $rc
}

# need_packages CMD:PACKAGE ...: install the packages of missing commands (as root, with apt).
need_packages() {
  local item missing=()
  for item in "$@"; do
    PATH=$PATH:/usr/sbin:/sbin command -v "${item%%:*}" >/dev/null 2>&1 || missing+=("${item#*:}")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "make test: these packages are missing: ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root"
    return 1
  fi
  echo "make test: installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

passed=0 failed=0 report=()
mkdir -p .cache
rm -f .cache/failures.txt .cache/stage-*.log .cache/stage-*.result
t0=$(date +%s)
for stage in "${stages[@]}"; do
  if ! declare -F "stage_$stage" >/dev/null; then
    echo "unknown stage '$stage' (known: ${all[*]})"; exit 2
  fi
done

# run_stage STAGE: its output in .cache/stage-STAGE.log, "PASS|FAIL seconds"
# in .cache/stage-STAGE.result. A stage whose preparation fails fails.
run_stage() {
  local s0 result=PASS
  s0=$(date +%s)
  if declare -F "prepare_$1" >/dev/null && ! "prepare_$1"; then
    result=FAIL
  elif ! "stage_$1"; then
    result=FAIL
  fi
  echo "$result $(( $(date +%s) - s0 ))" >".cache/stage-$1.result"
}
record() {
  local result secs line
  read -r result secs <".cache/stage-$1.result"
  if [[ $result == PASS ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  line=$(printf '%-11s %s  %4ss' "$1" "$result" "$secs")
  report+=("$line")
  echo "===== $line"
}

# The molecule scenarios take the longest and mostly wait (on the package
# archive, on jobs, on daemons): they run in the background, with their
# engine started first, while the other stages run here one by one. Their
# output follows when they end.
background=""
if [[ " ${stages[*]} " == *" molecule "* && ${#stages[@]} -gt 1 ]]; then
  echo
  echo "===== molecule (in the background; output: .cache/stage-molecule.log) ====="
  # the engine's install (apt) before the other stages' own
  prepare_molecule 2>&1 | tee .cache/stage-molecule.log
  if [[ ${PIPESTATUS[0]} -eq 0 ]]; then
    ( stage_molecule >>.cache/stage-molecule.log 2>&1; rc=$?
      echo "$([[ $rc -eq 0 ]] && echo PASS || echo FAIL) $(( $(date +%s) - t0 ))" >.cache/stage-molecule.result ) &
  else
    echo "FAIL $(( $(date +%s) - t0 ))" >.cache/stage-molecule.result
  fi
  background=molecule
fi
# The stages here are CPU-bound (pylint, ansible-lint, pytest) and the
# scenarios wait on their lab: these yield the CPU to the lab's daemons and
# Ansible, whose waits would otherwise lengthen the whole run.
if [[ -n $background ]]; then renice -n 10 -p $$ >/dev/null 2>&1 || true; fi
for stage in "${stages[@]}"; do
  [[ $stage == "$background" ]] && continue
  echo
  echo "===== $stage ====="
  run_stage "$stage" 2>&1 | tee -a ".cache/stage-$stage.log"
  record "$stage"
done
if [[ -n $background ]]; then
  wait
  echo
  echo "===== molecule (its output) ====="
  cat .cache/stage-molecule.log
  record molecule
fi

echo
echo "===== make test summary ($(( $(date +%s) - t0 ))s) ====="
printf '  %s\n' "${report[@]}"
# What can never run here (a real GPU), by name, from the stages' output.
python3 tools/digest.py not-run .cache/stage-*.log | sed 's/^/  /'
# Why a scenario failed, last: CI may keep only the end of this output.
sed 's/^/  /' .cache/failures.txt 2>/dev/null
echo "stages: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
