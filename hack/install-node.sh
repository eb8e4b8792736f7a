#!/usr/bin/env bash
# Installs what the real node (PODPILOT_NODE=real) runs besides the binaries
# hack/build-tools.sh builds: Debian's containerd, runc and CNI plugins, and
# iptables for kube-proxy and the guards. Versions are pinned (their upstream
# version; Debian's revision may move), checked after the install, and a
# package already present at that version is left alone. As with Prometheus,
# the packages' services are not used: hack/local-up.sh starts its own
# containerd with its own root, state and socket under the cluster's state
# directory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# PACKAGE=UPSTREAM-VERSION. kubelet 1.36 with containerd 1.6: see
# docs/local-cluster.md ("Why kubelet 1.36 beside a 1.37 control plane, with containerd 1.6").
PACKAGES=(containerd=1.6.20 runc=1.1.5 containernetworking-plugins=1.1.1 iptables=1.8.9)

missing=()
for p in "${PACKAGES[@]}"; do
  name=${p%%=*} want=${p#*=}
  have=$(pkg_version "$name")
  if [[ $have == "$want"* ]]; then continue; fi
  [[ -z $have ]] || die "$name $have is installed, the real node is pinned to $want: install $name=$want* (apt-get install '$name=$want*')"
  missing+=("$name=$want*")
done
if [[ ${#missing[@]} == 0 ]]; then
  log "node packages present: ${PACKAGES[*]}"
  exit 0
fi
log "installing Debian's ${missing[*]}"
apt_install "${missing[@]}"
# The containerd package starts its system service where an init system
# runs; the local cluster starts its own, so stop that one.
if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
  systemctl stop containerd 2>/dev/null || sudo systemctl stop containerd || true
fi
for p in "${PACKAGES[@]}"; do
  name=${p%%=*} want=${p#*=}
  have=$(pkg_version "$name")
  [[ $have == "$want"* ]] || die "$name: apt-get installed '${have:-nothing}', want $want"
done
log "installed: ${PACKAGES[*]}"
