#!/usr/bin/env bash
# Installs Debian's prometheus package if no prometheus binary is on PATH.
# The local cluster runs it as a plain process (hack/local-up.sh); the
# package's systemd service is not used.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if command -v prometheus >/dev/null 2>&1; then
  log "prometheus present: $(prometheus --version 2>&1 | head -n1)"
  exit 0
fi
sudo=""
if [[ $(id -u) != 0 ]]; then
  command -v sudo >/dev/null || die "installing prometheus needs root (apt-get install prometheus)"
  sudo=sudo
fi
log "installing Debian's prometheus package"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package starts a system service where an init system runs; the local
# cluster starts its own instance, so stop it if it is running.
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
  $sudo systemctl stop prometheus || true
fi
log "installed: $(prometheus --version 2>&1 | head -n1)"
