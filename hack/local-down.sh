#!/usr/bin/env bash
# Stops the local control plane that hack/local-up.sh started: exactly the
# processes whose pids it recorded (and only if they still run the binary it
# started), then removes the state directory unless KEEP_STATE=1.
#
# Usage: hack/local-down.sh [STATE_DIR]   (default: $PODPILOT_STATE_DIR or _output/local-cluster)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib-node.sh"

STATE=${1:-${PODPILOT_STATE_DIR:-$PODPILOT_ROOT/_output/local-cluster}}
[[ -d $STATE/pids ]] || { log "no cluster state in $STATE"; exit 0; }
STATE=$(cd "$STATE" && pwd)

# stop NAME: SIGTERM the recorded pid, SIGKILL after 10s.
stop() {
  local f=$STATE/pids/$1.pid pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$STATE"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

# The processes local-up.sh starts, in the order they stop.
CORE="kube-scheduler kube-proxy kubelet containerd kwok kube-controller-manager kube-apiserver prometheus etcd"

# Anything the tests or the demo started and recorded (podpilot, exporters) goes first.
for f in "$STATE"/pids/*.pid; do
  [[ -e $f ]] || continue
  name=$(basename "$f" .pid)
  [[ " $CORE " == *" $name "* ]] || stop "$name"
done
# A real node: controllers and the scheduler stop, the pods are deleted
# while the kubelet still runs (it releases their network), then kube-proxy,
# the kubelet, the containers, containerd, and what they left on the host.
if [[ -f $STATE/node/sysctl.orig ]]; then
  node_names
  stop kube-controller-manager
  stop kube-scheduler
  node_drain
  stop kube-proxy
  stop kubelet
  node_stop_containers
  stop containerd
  node_cleanup_host
fi
for name in $CORE; do stop "$name"; done
if [[ ${KEEP_STATE:-0} != 1 ]]; then rm -rf "$STATE"; fi
