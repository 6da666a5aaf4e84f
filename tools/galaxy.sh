#!/usr/bin/env bash
# What Galaxy checks before it takes the collection: antsibull-changelog
# lints the change fragments, antsibull-docs lints every plugin's and role's
# documentation, then galaxy-importer imports the
# built tarball (its ansible-doc call for every plugin, ansible-lint) and
# must report no error. Each tool in a venv of its own under .cache (their
# pins differ from .venv's).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${PYTHON:-python3}

venv_of() {  # venv_of NAME PACKAGE==VERSION: the venv's folder, made once
  local venv=$root/.cache/$1-venv
  if [[ ! -x $venv/bin/python || $(cat "$venv/.pin" 2>/dev/null) != "$2" ]]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$2" 2>&1 | grep -v '^WARNING: Location' >&2 || true
    echo "$2" >"$venv/.pin"
  fi
  echo "$venv"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuhpc-galaxy.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "--- antsibull-changelog lint (changelogs/fragments)"
changelog=$(venv_of changelog antsibull-changelog==0.36.0)
"$changelog/bin/antsibull-changelog" lint

echo "--- antsibull-docs lint-collection-docs --plugin-docs"
docs=$(venv_of docs antsibull-docs==2.28.0)
# it runs ansible-doc: .venv's
(cd .collections/ansible_collections/gpuhpc/slurm &&
  PATH=$root/.venv/bin:$PATH ANSIBLE_COLLECTIONS_PATH=$root/.collections \
    "$docs/bin/antsibull-docs" lint-collection-docs --plugin-docs .)

echo "--- galaxy-importer on the built tarball"
importer=$(venv_of galaxy galaxy-importer==0.4.44)
.venv/bin/ansible-galaxy collection build --output-path "$work" . >/dev/null
cat >"$work/galaxy-importer.cfg" <<'EOF'
[galaxy-importer]
RUN_ANSIBLE_TEST = False
RUN_ANSIBLE_LINT = True
LOCAL_IMAGE_DOCKER = False
EOF
# ansible-doc and ansible-lint from the importer's venv, as Galaxy runs them
PATH=$importer/bin:$PATH GALAXY_IMPORTER_CONFIG=$work/galaxy-importer.cfg \
  "$importer/bin/python" -m galaxy_importer.main "$work"/gpuhpc-slurm-*.tar.gz >"$work/import.log" 2>&1 || {
  cat "$work/import.log"; echo "galaxy-importer failed"; exit 1; }
grep -E '^(ERROR|WARNING)' "$work/import.log" || true
if grep -qE '^ERROR' "$work/import.log"; then
  echo "galaxy-importer reported errors (above)"
  exit 1
fi
tail -n 1 "$work/import.log"
