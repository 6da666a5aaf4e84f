#!/usr/bin/env bash
# ansible-test sanity on the collection. ansible-test wants the collection at
# .../ansible_collections/gpuhpc/slurm, so the files git knows about (tracked,
# or new and not ignored) are copied into such a tree first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# ansible-test installs the tools of its tests (pylint, ...) into the Python
# it runs with: a venv of its own keeps them apart from .venv's linters, one
# per ansible-core release (GPUHPC_CORE, e.g. ansible-core==2.16.14; default:
# the one of requirements-dev.txt).
core=${GPUHPC_CORE:-$(grep -E '^ansible-core==' requirements-dev.txt)}
venv=$root/.cache/sanity-venv${GPUHPC_CORE:+-${core#ansible-core==}}
if [[ ! -x $venv/bin/ansible-test || $(cat "$venv/.core" 2>/dev/null) != "$core" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "$core" 2>&1 | grep -v '^WARNING: Location' || true
  echo "$core" >"$venv/.core"
fi
# ansible-test bootstraps pip in each venv it makes with a get-pip.py it
# downloads from a host that may not be reachable: provide a stand-in.
pip_version=$("$venv/bin/python" -c 'import re, ansible_test._internal.python_requirements as r, inspect; print(re.search(r"pip=.([0-9.]+).", inspect.getsource(r)).group(1))')
standin=~/.ansible/test/cache/get_pip_${pip_version//./_}.py
if [[ ! -f $standin ]]; then
  mkdir -p "$(dirname "$standin")"
  cp tools/get_pip_standin.py "$standin"
fi
python=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# Outside this checkout: inside it, ansible-test would follow this repo's git.
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuhpc-sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT
dest=$work/ansible_collections/gpuhpc/slurm
mkdir -p "$dest"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [[ -e $f ]] && printf '%s\0' "$f"
done | tar -c --null -T - | tar -x -C "$dest"
cd "$dest"
export PATH=$venv/bin:$PATH
ansible-test sanity --requirements --python "$python" --color no "$@"
