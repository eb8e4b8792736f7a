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
# docs/local-cluster.md ("Why kubelet 1.36 and containerd 1.6").
PACKAGES=(containerd=1.6.20 runc=1.1.5 containernetworking-plugins=1.1.1 iptables=1.8.9)

installed() { dpkg-query -W -f '${Status} ${Version}' "$1" 2>/dev/null | awk '$3 == "installed" { print $4 }'; }

missing=()
for p in "${PACKAGES[@]}"; do
  name=${p%%=*} want=${p#*=}
  have=$(installed "$name")
  if [[ $have == "$want"* ]]; then continue; fi
  [[ -z $have ]] || die "$name $have is installed, the real node is pinned to $want: install $name=$want* (apt-get install '$name=$want*')"
  missing+=("$name=$want*")
done
if [[ ${#missing[@]} == 0 ]]; then
  log "node packages present: ${PACKAGES[*]}"
  exit 0
fi
sudo=""
if [[ $(id -u) != 0 ]]; then
  command -v sudo >/dev/null || die "installing ${missing[*]} needs root"
  sudo=sudo
fi
log "installing Debian's ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The containerd package starts its system service where an init system
# runs; the local cluster starts its own, so stop that one.
if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
  $sudo systemctl stop containerd || true
fi
for p in "${PACKAGES[@]}"; do
  name=${p%%=*} want=${p#*=}
  [[ $(installed "$name") == "$want"* ]] || die "$name: want $want, have '$(installed "$name")'"
done
log "installed: ${PACKAGES[*]}"
