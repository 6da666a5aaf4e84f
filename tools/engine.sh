#!/usr/bin/env bash
# Make sure a Docker engine answers. Uses the one that runs; otherwise (as
# root) installs Debian's docker.io and starts dockerd in the background.
set -euo pipefail

log() { printf '[engine] %s\n' "$*" >&2; }
die() { printf '[engine] ERROR: %s\n' "$*" >&2; exit 1; }

# Each lab container runs systemd, which takes inotify instances of the
# host's root user: at the kernel's default (128), two labs side by side and a
# third starting leave the new containers' systemd waiting at boot for ever.
# Raised where this may (root, a writable /proc/sys); said where it may not.
instances=$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo 1024)
if (( instances < 1024 )); then
  if [[ $(id -u) -eq 0 ]] && sysctl -qw fs.inotify.max_user_instances=1024 2>/dev/null; then
    log "fs.inotify.max_user_instances raised from $instances to 1024 (systemd in every lab container takes some)"
  else
    log "fs.inotify.max_user_instances is $instances: more than one lab at a time may hang at boot (sysctl -w fs.inotify.max_user_instances=1024 as root)"
  fi
fi

if docker info >/dev/null 2>&1; then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  die "no Docker engine answers and you are not root. Either start Docker and add yourself to the 'docker' group (then log in again), or run this as root so the engine can be installed and started."
fi

if ! command -v dockerd >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "no Docker engine and no apt-get to install one: install Docker (dockerd) and run again."
  log "no Docker engine found: installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
  log "starting docker.service"
  systemctl start docker.service || true
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd in the background (log: /var/log/gpuhpc-dockerd.log)"
  nohup dockerd --storage-driver=overlay2 >/var/log/gpuhpc-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
fi

docker info >/dev/null 2>&1 || die "dockerd did not come up within 60 s; see /var/log/gpuhpc-dockerd.log"
log "Docker engine is up ($(docker version --format '{{.Server.Version}}'))"
