#!/usr/bin/env bash
# The unit tests on each ansible-core release of tests/ansible-cores.txt (the
# lowest that meta/runtime.yml admits, and the newest this Python runs) but
# requirements-dev.txt's, which the unit stage has run them on already (the
# sanity stage runs ansible-test on every release of the list). One venv per release
# under .cache, made once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${PYTHON:-python3}
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

failed=()
while read -r core; do
  [[ -z $core || $core == \#* ]] && continue
  version=${core#ansible-core==}
  # .venv's release: the unit stage has just run on it
  [[ $core == "$(grep -E '^ansible-core==' requirements-dev.txt)" ]] && continue
  echo "=== $core: unit tests"
  venv=$root/.cache/unit-venv-$version
  if [[ ! -x $venv/bin/pytest || $(cat "$venv/.core" 2>/dev/null) != "$core" ]]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    # the unit tests' own libraries, at the versions requirements-dev.txt pins
    mapfile -t libs < <(grep -E '^(pytest|PyMySQL|prometheus-client|passlib|bcrypt)==' requirements-dev.txt)
    "$venv/bin/pip" install -q --disable-pip-version-check "$core" "${libs[@]}" 2>&1 \
      | grep -v '^WARNING: Location' || true
    echo "$core" >"$venv/.core"
  fi
  # The collections the lab's connection plugin imports (community.docker),
  # from .venv's `ansible` package, beside this checkout's .collections.
  extra=$root/.cache/cores-collections/ansible_collections
  mkdir -p "$extra"
  ln -sfn "$site/ansible_collections/community" "$extra/community"
  PYTHONPATH=$root/.cache/cores-collections "$venv/bin/pytest" -q -p no:cacheprovider tests/unit \
    || failed+=("$version unit")
done <tests/ansible-cores.txt

if ((${#failed[@]})); then
  printf 'failed on: %s\n' "${failed[@]}"
  exit 1
fi
