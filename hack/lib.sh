#!/usr/bin/env bash
# Shared helpers for the hack/ scripts. Source it; it defines no side effects.

PODPILOT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_CACHE=${PODPILOT_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podpilot/tools}

# modver MODFILE MODULE prints the version MODFILE requires of MODULE.
modver() {
  awk -v m="$2" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}

KUBE_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/go.mod" k8s.io/kubernetes)
# The real node's kubelet and kube-proxy, one minor below the control plane
# (hack/tools/node/tools.go says why).
NODE_KUBE_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/node/go.mod" k8s.io/kubernetes)
ETCD_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/go.mod" go.etcd.io/etcd/server/v3)
KWOK_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/kwok/go.mod" sigs.k8s.io/kwok)
GOLANGCI_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/golangci/go.mod" github.com/golangci/golangci-lint/v2)
LOGTOOLS_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/logcheck/go.mod" sigs.k8s.io/logtools)
HELM_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/helm/go.mod" helm.sh/helm/v3)
ADAPTER_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/prometheus-adapter/go.mod" sigs.k8s.io/prometheus-adapter)
METRICS_SERVER_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/metrics-server/go.mod" sigs.k8s.io/metrics-server)
TEST_ADAPTER_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/test-adapter/go.mod" sigs.k8s.io/custom-metrics-apiserver)
KEDA_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/keda/go.mod" github.com/kedacore/keda/v2)
PROMETHEUS_NODE_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/prometheus/go.mod" github.com/prometheus/prometheus)
VICTORIAMETRICS_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/victoriametrics/go.mod" github.com/VictoriaMetrics/VictoriaMetrics)
THANOS_VERSION=$(modver "$PODPILOT_ROOT/hack/tools/thanos/go.mod" github.com/thanos-io/thanos)
GO_MINOR=$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/go\1/')

# Binaries live outside the clone, keyed by tool version and Go minor version,
# so a fresh clone on the same machine reuses them.
KUBE_APISERVER=$TOOLS_CACHE/kubernetes-$KUBE_VERSION-$GO_MINOR/kube-apiserver
KUBE_CONTROLLER_MANAGER=$TOOLS_CACHE/kubernetes-$KUBE_VERSION-$GO_MINOR/kube-controller-manager
# kubectl at the control plane's version: the scripts, the tests and the
# demo's printed commands use it, not whatever kubectl the machine has (a
# distribution's may be several minors away, outside the supported skew).
KUBECTL=$TOOLS_CACHE/kubernetes-$KUBE_VERSION-$GO_MINOR/kubectl
# The real node (PODPILOT_NODE=real): scheduler, kubelet, kube-proxy and
# metrics-server, the anchor podpilot's metrics.k8s.io is compared with.
KUBE_SCHEDULER=$TOOLS_CACHE/kubernetes-$KUBE_VERSION-$GO_MINOR/kube-scheduler
KUBELET=$TOOLS_CACHE/kubernetes-$NODE_KUBE_VERSION-$GO_MINOR/kubelet
KUBE_PROXY=$TOOLS_CACHE/kubernetes-$NODE_KUBE_VERSION-$GO_MINOR/kube-proxy
METRICS_SERVER=$TOOLS_CACHE/metrics-server-$METRICS_SERVER_VERSION-$GO_MINOR/metrics-server
# The custom-metrics-apiserver's test adapter: the other external-metrics adapter podpilot
# forwards to in the e2e test of --external-metrics-forward.
TEST_ADAPTER=$TOOLS_CACHE/test-adapter-$TEST_ADAPTER_VERSION-$GO_MINOR/test-adapter
# KEDA's operator and metrics server (`hack/build-tools.sh keda`): the external-metrics adapter
# podpilot forwards to in the KEDA tier (make test-keda, test/e2e/keda_test.go).
KEDA_OPERATOR=$TOOLS_CACHE/keda-$KEDA_VERSION-$GO_MINOR/keda-operator
KEDA_ADAPTER=$TOOLS_CACHE/keda-$KEDA_VERSION-$GO_MINOR/keda-adapter
# Debian's prometheus lacks kubernetes_sd_configs: the real node's is built
# from the same release's module (hack/tools/prometheus).
PROMETHEUS_NODE=$TOOLS_CACHE/prometheus-$PROMETHEUS_NODE_VERSION-$GO_MINOR/prometheus
# The distributed-store backends the backend tier runs podpilot against
# (PODPILOT_BACKEND, `hack/build-tools.sh backends`).
VICTORIAMETRICS=$TOOLS_CACHE/victoriametrics-$VICTORIAMETRICS_VERSION-$GO_MINOR/victoria-metrics
# Built with -tags slicelabels (see build-tools.sh's backends).
THANOS=$TOOLS_CACHE/thanos-$THANOS_VERSION-slicelabels-$GO_MINOR/thanos
ETCD=$TOOLS_CACHE/etcd-$ETCD_VERSION-$GO_MINOR/etcd
KWOK=$TOOLS_CACHE/kwok-$KWOK_VERSION-$GO_MINOR/kwok
GOLANGCI_LINT=$TOOLS_CACHE/golangci-lint-$GOLANGCI_VERSION-$GO_MINOR/golangci-lint
LOGCHECK=$TOOLS_CACHE/logcheck-$LOGTOOLS_VERSION-$GO_MINOR/logcheck
HELM=$TOOLS_CACHE/helm-$HELM_VERSION-$GO_MINOR/helm
# prometheus-adapter is only the bench's optional baseline (make bench-adapter).
PROMETHEUS_ADAPTER_BIN=$TOOLS_CACHE/prometheus-adapter-$ADAPTER_VERSION-$GO_MINOR/adapter

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# take_ports VAR... sets each VAR, in the caller's shell, to a distinct TCP
# port that no socket on this machine holds: listening, connected or closing.
# The ports come from outside the kernel's ephemeral range
# (net.ipv4.ip_local_port_range, read from PODPILOT_EPHEMERAL_PORTS, default
# /proc/sys/net/ipv4/ip_local_port_range), preferring below it. Inside that
# range the kernel may hand a port to any client connection between the pick
# and the bind, and the server then fails with "bind: address already in
# use". It assigns rather than prints because $(take_port) would run in a
# subshell that forgets what it took.
take_ports() {
  local lo hi first last span start i p var
  local -A held=()
  read -r lo hi <"${PODPILOT_EPHEMERAL_PORTS:-/proc/sys/net/ipv4/ip_local_port_range}"
  if ((lo - 10000 >= 1000)); then
    first=10000 last=$((lo - 1))
  elif ((65535 - hi >= 1000)); then
    first=$((hi + 1)) last=65535
  else
    die "the ephemeral port range $lo-$hi (sysctl net.ipv4.ip_local_port_range) leaves fewer than 1000 ports above 10000 for the cluster's servers: narrow it"
  fi
  for p in $(ss -Htan | awk '{ n = split($4, a, ":"); print a[n] }') ${_taken_ports:-}; do
    held[$p]=1
  done
  span=$((last - first + 1))
  for var in "$@"; do
    start=$(((RANDOM * 32768 + RANDOM) % span))
    for ((i = 0; i < span; i++)); do
      p=$((first + (start + i) % span))
      [[ -z ${held[$p]:-} ]] && break
    done
    ((i < span)) || die "no free TCP port for $var in $first-$last"
    held[$p]=1
    _taken_ports+=" $p"
    printf -v "$var" '%s' "$p"
  done
}

# pkg_version NAME prints the installed version of Debian's package NAME, or
# nothing where it is not installed. dpkg-query exits 1 for a package this
# machine has never had: under `set -e` and pipefail that is an answer, not a
# failure, so its status is read here and never reaches the caller's $(…).
pkg_version() {
  local out
  out=$(dpkg-query -W -f '${Status} ${Version}\n' "$1" 2>/dev/null) || return 0
  awk '$3 == "installed" { print $4 }' <<<"$out"
}

# apt_install PKG... installs Debian's packages (PKG is NAME or NAME=VERSION*)
# with apt-get, as root or through sudo: `apt-get update` once, then one
# `apt-get install` per package, so a failure names its package. On failure
# it prints the end of apt's own output and exits 1, its last line naming the
# command and apt's error.
apt_install() {
  local sudo="" out rc=0 p
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || die "installing $* needs root: run as root, or install sudo"
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  out=$(mktemp)
  $sudo apt-get update -qq >"$out" 2>&1 || rc=$?
  if [[ $rc != 0 ]]; then apt_failed "apt-get update" "$rc" "$out"; fi
  for p in "$@"; do
    log "apt-get install $p"
    $sudo apt-get install -y -qq --no-install-recommends "$p" >"$out" 2>&1 || rc=$?
    if [[ $rc != 0 ]]; then apt_failed "apt-get install '$p'" "$rc" "$out"; fi
  done
  rm -f "$out"
}

# apt_failed COMMAND STATUS OUTPUT shows the end of apt's output and dies
# naming COMMAND and apt's last error line.
apt_failed() {
  local cmd=$1 rc=$2 out=$3 err
  log "$cmd failed (exit $rc); the end of its output:"
  tail -n 20 "$out" | sed 's/^/  | /' >&2
  err=$(grep -E '^(E|Err):' "$out" | tail -n 1 || true)
  [[ -n $err ]] || err=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1 || true)
  rm -f "$out"
  die "$cmd failed (exit $rc): ${err:-apt printed nothing}"
}
