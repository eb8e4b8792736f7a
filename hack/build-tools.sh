#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager, kubectl, kwok and helm from the
# modules pinned in hack/tools into a per-user cache (see hack/lib.sh), and
# skips every binary that is already there. `build-tools.sh node` builds the
# real node's kube-scheduler (same module), kubelet and kube-proxy (hack/tools/node, one minor older),
# metrics-server (hack/tools/metrics-server) and Prometheus with its
# Kubernetes service discovery (hack/tools/prometheus). `build-tools.sh lint` builds only
# the linters (golangci-lint, logcheck); `build-tools.sh prometheus-adapter`
# only prometheus-adapter, the bench's optional baseline (~20 min cold), and
# prints its path; `build-tools.sh prometheus-adapter-current` the same
# adapter's code on podpilot's library versions (see adapter_current); `build-tools.sh test-adapter`
# only the custom-metrics-apiserver's test adapter (hack/tools/test-adapter), the external-metrics
# adapter the e2e test of --external-metrics-forward runs beside podpilot, and prints its path;
# `build-tools.sh keda` only KEDA's operator and metrics server (hack/tools/keda, ~10 min cold), the
# external-metrics adapter of `make test-keda`, and prints their paths;
# `build-tools.sh backends` the distributed stores of the backend tier (VictoriaMetrics
# single-node and Thanos, see backends) and prints their paths. A cold build takes ~10 minutes on
# 2 cores; a warm one, a second.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# build OUT DIR PKG [LDFLAGS [TAGS]] builds PKG in module DIR into OUT, atomically.
build() {
  local out=$1 dir=$2 pkg=$3 ldflags=${4:-} tags=${5:-}
  if [[ -x $out ]]; then log "cached: $out"; return; fi
  mkdir -p "$(dirname "$out")"
  log "building $pkg (cold builds take minutes)"
  local start=$SECONDS
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$out.tmp.$$" "$pkg")
  mv "$out.tmp.$$" "$out"
  log "built $out in $((SECONDS - start))s"
}

# lint builds the linters `make verify` runs.
lint() {
  build "$GOLANGCI_LINT" "$PODPILOT_ROOT/hack/tools/golangci" github.com/golangci/golangci-lint/v2/cmd/golangci-lint
  build "$LOGCHECK" "$PODPILOT_ROOT/hack/tools/logcheck" sigs.k8s.io/logtools/logcheck
}

# adapter_current builds prometheus-adapter's cmd/adapter in the module
# hack/tools/prometheus-adapter-current (podpilot's k8s.io versions), ported:
# a throwaway main package in that module gets upstream's adapter.go, read from
# the module cache at build time (never kept here) with two calls renamed to
# port.go.in's functions, and port.go.in itself (see that file).
adapter_current() {
  local mod=$PODPILOT_ROOT/hack/tools/prometheus-adapter-current key out
  # Keyed also by the library versions (go.mod) and the port file.
  key=$(cat "$mod/go.mod" "$mod/port.go.in" | cksum | cut -d' ' -f1)
  out=$TOOLS_CACHE/prometheus-adapter-$ADAPTER_VERSION-current-$key-$GO_MINOR/adapter
  if [[ ! -x $out ]]; then
    local src work
    src=$(cd "$mod" && go mod download -json sigs.k8s.io/prometheus-adapter | awk -F'"' '$2 == "Dir" { print $4 }')/cmd/adapter
    work=$(mktemp -d "$mod/port.XXXXXX")
    trap "rm -rf '$work'" EXIT
    sed -e 's/cmd\.Run(stopCh)/cmd.Run(podpilotPortContext(stopCh))/' \
      -e 's/(generatedopenapi\.GetOpenAPIDefinitions, openapinamer/(podpilotPortDefinitions(generatedopenapi.GetOpenAPIDefinitions), openapinamer/' \
      "$src/adapter.go" >"$work/adapter.go"
    cp "$mod/port.go.in" "$work/port.go"
    if ! grep -q podpilotPortContext "$work/adapter.go" || ! grep -q podpilotPortDefinitions "$work/adapter.go"; then
      die "prometheus-adapter's adapter.go changed: update the port in $mod"
    fi
    build "$out" "$mod" "./$(basename "$work")"
  fi
  echo "$out"
}

# kubever [VERSION] is the version stamp of a kube binary (the control plane's by default).
kubever() {
  local kv=k8s.io/component-base/version v=${1:-$KUBE_VERSION}
  local minor=${v#v1.}; minor=${minor%%.*}
  echo "-X $kv.gitVersion=$v -X $kv.gitMajor=1 -X $kv.gitMinor=$minor"
}

# node builds what the real node (PODPILOT_NODE=real) runs besides the
# control plane.
node() {
  build "$KUBE_SCHEDULER" "$PODPILOT_ROOT/hack/tools" k8s.io/kubernetes/cmd/kube-scheduler "$(kubever)"
  build "$KUBELET" "$PODPILOT_ROOT/hack/tools/node" k8s.io/kubernetes/cmd/kubelet "$(kubever "$NODE_KUBE_VERSION")"
  build "$KUBE_PROXY" "$PODPILOT_ROOT/hack/tools/node" k8s.io/kubernetes/cmd/kube-proxy "$(kubever "$NODE_KUBE_VERSION")"
  build "$METRICS_SERVER" "$PODPILOT_ROOT/hack/tools/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server \
    "-X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION"
  # v0.42.0 is Prometheus 2.42.0.
  local promver=${PROMETHEUS_NODE_VERSION#v0.}
  build "$PROMETHEUS_NODE" "$PODPILOT_ROOT/hack/tools/prometheus" github.com/prometheus/prometheus/cmd/prometheus \
    "-X github.com/prometheus/common/version.Version=2.${promver}"
}

# backends builds the distributed stores `make test-backends` runs podpilot
# against: VictoriaMetrics' single-node server and Thanos (sidecar and
# querier are one binary), and prints their paths. Not part of the default
# build: cold, it takes minutes more than the rest (docs/backends.md).
backends() {
  build "$VICTORIAMETRICS" "$PODPILOT_ROOT/hack/tools/victoriametrics" github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics \
    "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-$VICTORIAMETRICS_VERSION"
  # slicelabels, as Thanos' own release build (.promu.yml): its store API
  # casts Prometheus' labels.Labels as a slice; without the tag (Prometheus'
  # default is stringlabels) the sidecar panics on its first gRPC answer
  # ("makeslice: len out of range" in extgrpc's codec).
  build "$THANOS" "$PODPILOT_ROOT/hack/tools/thanos" github.com/thanos-io/thanos/cmd/thanos \
    "-X github.com/prometheus/common/version.Version=${THANOS_VERSION#v}" slicelabels
  echo "$VICTORIAMETRICS"
  echo "$THANOS"
}

# keda builds KEDA's operator and metrics server (cmd/operator, cmd/adapter of the module pinned
# in hack/tools/keda), stamped with KEDA's version as its own Makefile does, and prints their
# paths. Not part of the default build: cold, it takes about 10 minutes on 2 cores (docs/testing.md).
keda() {
  local ldflags="-X github.com/kedacore/keda/v2/version.Version=${KEDA_VERSION#v}"
  build "$KEDA_OPERATOR" "$PODPILOT_ROOT/hack/tools/keda" github.com/kedacore/keda/v2/cmd/operator "$ldflags"
  build "$KEDA_ADAPTER" "$PODPILOT_ROOT/hack/tools/keda" github.com/kedacore/keda/v2/cmd/adapter "$ldflags"
  echo "$KEDA_OPERATOR"
  echo "$KEDA_ADAPTER"
}

main() {
  if [[ ${1:-} == keda ]]; then keda; return; fi
  if [[ ${1:-} == backends ]]; then backends; return; fi
  if [[ ${1:-} == lint ]]; then lint; return; fi
  if [[ ${1:-} == node ]]; then node; return; fi
  if [[ ${1:-} == prometheus-adapter ]]; then
    build "$PROMETHEUS_ADAPTER_BIN" "$PODPILOT_ROOT/hack/tools/prometheus-adapter" sigs.k8s.io/prometheus-adapter/cmd/adapter
    echo "$PROMETHEUS_ADAPTER_BIN"
    return
  fi
  if [[ ${1:-} == prometheus-adapter-current ]]; then adapter_current; return; fi
  if [[ ${1:-} == test-adapter ]]; then
    build "$TEST_ADAPTER" "$PODPILOT_ROOT/hack/tools/test-adapter" sigs.k8s.io/custom-metrics-apiserver/test-adapter
    echo "$TEST_ADAPTER"
    return
  fi
  local kubever; kubever=$(kubever)
  build "$ETCD" "$PODPILOT_ROOT/hack/tools" go.etcd.io/etcd/server/v3
  build "$KWOK" "$PODPILOT_ROOT/hack/tools/kwok" sigs.k8s.io/kwok/cmd/kwok
  build "$HELM" "$PODPILOT_ROOT/hack/tools/helm" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  build "$KUBE_APISERVER" "$PODPILOT_ROOT/hack/tools" k8s.io/kubernetes/cmd/kube-apiserver "$kubever"
  build "$KUBE_CONTROLLER_MANAGER" "$PODPILOT_ROOT/hack/tools" k8s.io/kubernetes/cmd/kube-controller-manager "$kubever"
  build "$KUBECTL" "$PODPILOT_ROOT/hack/tools" k8s.io/kubernetes/cmd/kubectl "$kubever"
}

main "$@"
