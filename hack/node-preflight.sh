#!/usr/bin/env bash
# Says whether this machine can run the real node (PODPILOT_NODE=real, see
# hack/lib-node.sh): exits 0 if it can; exits 1 and prints the reason on
# stdout, in one line, if it cannot (no Linux, root, cgroups, network
# namespace or overlayfs); exits 2 and prints the failed step and the end of
# its output if it could but installing the node's tools failed. `make demo`
# runs it to choose between the real node and the kwok node, and stops on 2.
#
# It checks what no install can fix first: Linux, root, cgroup v1
# hierarchies for cpu and memory, a new network namespace, overlayfs. Then,
# with --install, it installs what is missing as `make node-tools` does
# (Debian's containerd, runc, CNI plugins and iptables with apt; kubelet,
# kube-proxy, kube-scheduler, metrics-server and Prometheus built into the
# tools cache; output in --log), and last it runs local-up.sh's own check.
#
# Usage: hack/node-preflight.sh [--install] [--log FILE]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-node.sh"

INSTALL=0
LOG=$PODPILOT_ROOT/_output/node-tools.log
while [[ $# -gt 0 ]]; do
  case $1 in
    --install) INSTALL=1 ;;
    --log) LOG=$2; shift ;;
    *) echo "usage: $0 [--install] [--log FILE]" >&2; exit 2 ;;
  esac
  shift
done

# cannot REASON prints why the real node cannot run here and exits 1.
cannot() {
  echo "$*"
  exit 1
}

host_checks() {
  [[ $(uname -s) == Linux ]] || cannot "containers need Linux; this is $(uname -s)"
  [[ $(id -u) == 0 ]] || cannot "the real node needs root (network namespaces, cgroups, iptables, mounts); running as uid $(id -u)"
  local c
  for c in cpu cpuacct memory pids; do
    mountpoint -q "/sys/fs/cgroup/$c" ||
      cannot "no cgroup v1 '$c' hierarchy at /sys/fs/cgroup/$c: the real node's kubelet is set up for cgroup v1 (docs/local-cluster.md)"
  done
  local err
  err=$(unshare --net true 2>&1) || cannot "cannot create a network namespace (${err:-unshare --net failed}): no pod networking"
  grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null ||
    cannot "the kernel has no overlayfs, containerd's snapshotter"
}

# failed STEP prints why installing the node's tools failed, in one line
# (the failed step and the last line of its own output), and exits 2: the
# machine could run the node, so this is an error to fix, not a reason to
# fall back to kwok.
failed() {
  local last
  last=$(grep -v '^[[:space:]]*$' "$LOG" | tail -n 1 || true)
  last=${last#\[*\] }
  echo "$1 failed: ${last:-it printed nothing} (log $LOG)"
  exit 2
}

# install runs what `make node-tools` runs, logging to $LOG.
install() {
  mkdir -p "$(dirname "$LOG")"
  log "installing the real node's tools (hack/build-tools.sh node, hack/install-node.sh; log $LOG)"
  "$PODPILOT_ROOT/hack/build-tools.sh" node >"$LOG" 2>&1 ||
    failed "hack/build-tools.sh node (kubelet, kube-proxy, kube-scheduler, metrics-server, Prometheus)"
  "$PODPILOT_ROOT/hack/install-node.sh" >>"$LOG" 2>&1 ||
    failed "hack/install-node.sh (Debian's containerd, runc, CNI plugins, iptables)"
}

host_checks
if [[ $INSTALL == 1 ]]; then install; fi
# local-up.sh's own check: the packages and binaries are in place.
why=$( (node_check) 2>&1 >/dev/null) || cannot "${why#*ERROR: }"
