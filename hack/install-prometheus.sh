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
log "installing Debian's prometheus package"
apt_install prometheus
# The package starts a system service where an init system runs; the local
# cluster starts its own instance, so stop it if it is running.
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
  systemctl stop prometheus 2>/dev/null || sudo systemctl stop prometheus || true
fi
command -v prometheus >/dev/null || die "apt-get installed the prometheus package, but no prometheus is on PATH ($PATH)"
log "installed: $(prometheus --version 2>&1 | head -n1)"
