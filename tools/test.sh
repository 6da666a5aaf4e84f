#!/usr/bin/env bash
# `make test`: every stage runs, each reports PASS or FAIL, and the last line
# sums them up. Exit status is non-zero when any stage failed.
#   tools/test.sh                 all stages
#   tools/test.sh unit molecule   only those
set -uo pipefail
cd "$(dirname "$0")/.."

all=(lint sanity unit collection molecule)
stages=("${@:-${all[@]}}")
scenarios=(${GPUHPC_MOLECULE_SCENARIOS:-default debian12})

tools/deps.sh || { echo "make test: could not install the tools (tools/deps.sh)"; exit 1; }
# shellcheck disable=SC1091
source .venv/bin/activate

stage_lint()       { yamllint -s . && ansible-lint --nocolor; }
stage_sanity()     { tools/sanity.sh; }
stage_unit()       { pytest -q -p no:cacheprovider tests/unit; }
stage_collection() { pytest -q -p no:cacheprovider tests/integration; }
stage_molecule() {
  tools/engine.sh || return 1
  local s rc=0
  for s in "${scenarios[@]}"; do
    echo "--- molecule scenario $s"
    molecule test -s "$s" || { echo "--- molecule scenario $s: FAILED"; rc=1; }
  done
  return $rc
}

passed=0 failed=0 report=()
t0=$(date +%s)
for stage in "${stages[@]}"; do
  if ! declare -F "stage_$stage" >/dev/null; then
    echo "unknown stage '$stage' (known: ${all[*]})"; exit 2
  fi
  echo
  echo "===== $stage ====="
  s0=$(date +%s)
  if "stage_$stage"; then
    result=PASS; passed=$((passed + 1))
  else
    result=FAIL; failed=$((failed + 1))
  fi
  line=$(printf '%-11s %s  %4ss' "$stage" "$result" "$(( $(date +%s) - s0 ))")
  report+=("$line")
  echo "===== $line"
done

echo
echo "===== make test summary ($(( $(date +%s) - t0 ))s) ====="
printf '  %s\n' "${report[@]}"
echo "stages: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
