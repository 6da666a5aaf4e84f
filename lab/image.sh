#!/usr/bin/env bash
# Build the lab's systemd base image once and cache it in the local engine.
#   lab/image.sh SUITE TAG       e.g. lab/image.sh trixie gpuhpc-lab/debian:trixie
# Uses the official debian image when a registry answers; otherwise
# debootstraps the suite into a folder and imports it (no registry needed).
# Prints "cached" or "built" on its last line.
set -euo pipefail
suite=${1:?usage: image.sh SUITE TAG}
tag=${2:?usage: image.sh SUITE TAG}
here=$(cd "$(dirname "$0")" && pwd)
mirror=${GPUHPC_LAB_MIRROR:-http://deb.debian.org/debian}
packages=systemd,systemd-sysv,dbus,python3,python3-apt,ca-certificates,iproute2,procps,gnupg,sudo

log() { printf '[lab-image] %s\n' "$*" >&2; }
die() { printf '[lab-image] ERROR: %s\n' "$*" >&2; exit 1; }

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo cached
  exit 0
fi

labels=(--label io.gpuhpc.lab.image=true --label "io.gpuhpc.lab.suite=$suite")

if timeout 30 docker pull -q "debian:$suite" >/dev/null 2>&1; then
  log "building $tag from the official debian:$suite image"
  docker build -q "${labels[@]}" --build-arg "SUITE=$suite" --build-arg "PACKAGES=${packages//,/ }" \
    -t "$tag" -f "$here/Containerfile" "$here" >/dev/null
  echo built
  exit 0
fi

# No registry: debootstrap, as root.
if ! command -v debootstrap >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "no registry answers: installing debootstrap to build the image locally"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  else
    die "cannot build $tag: no container registry answers and debootstrap is missing. Install it (apt-get install debootstrap) and run again as root, or make a registry with debian:$suite reachable."
  fi
fi
[[ $(id -u) -eq 0 ]] || die "cannot build $tag: no container registry answers and debootstrap needs root. Run again as root (sudo make lab)."

rootfs=$(mktemp -d "${TMPDIR:-/tmp}/gpuhpc-lab-rootfs.XXXXXX")
trap 'rm -rf "$rootfs"' EXIT
log "no registry answers: debootstrapping Debian $suite (about a minute)"
# Twice: a mirror that hiccups once must not fail the run.
for attempt in 1 2; do
  if debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$rootfs.log" 2>&1; then
    break
  fi
  tail -20 "$rootfs.log" >&2
  if [[ $attempt -eq 2 ]]; then
    rm -f "$rootfs.log"
    die "debootstrap of $suite from $mirror failed (see above); set GPUHPC_LAB_MIRROR to a reachable Debian mirror"
  fi
  log "debootstrap failed; trying once more"
  rm -rf "${rootfs:?}"/*
done
rm -f "$rootfs.log"
# Keep the image small and the container quiet.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb
tar -C "$rootfs" -c . | docker import \
  --change 'CMD ["/sbin/init"]' --change 'ENV container=docker' \
  --change "LABEL io.gpuhpc.lab.image=true io.gpuhpc.lab.suite=$suite" \
  - "$tag" >/dev/null
echo built
