#!/usr/bin/env bash
# Installs Debian's victoria-metrics package (the single-node server) if no
# victoria-metrics binary is on PATH: the floor of the backend tier
# (hack/test-backends.sh runs PODPILOT_BACKEND=victoriametrics with it beside
# the release built from hack/tools/victoriametrics; docs/backends.md). The
# local cluster runs it as a plain process; the package's service is not used.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Debian's binary is built without a version stamp (its -version prints an
# empty line): the package's version names it.
if command -v victoria-metrics >/dev/null 2>&1; then
  log "victoria-metrics present: $(command -v victoria-metrics) $(pkg_version victoria-metrics)"
  exit 0
fi
log "installing Debian's victoria-metrics package"
apt_install victoria-metrics
if command -v systemctl >/dev/null && systemctl is-active --quiet victoria-metrics 2>/dev/null; then
  systemctl stop victoria-metrics 2>/dev/null || sudo systemctl stop victoria-metrics || true
fi
command -v victoria-metrics >/dev/null || die "apt-get installed the victoria-metrics package, but no victoria-metrics is on PATH ($PATH)"
log "installed: victoria-metrics $(pkg_version victoria-metrics)"
