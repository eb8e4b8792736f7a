#!/usr/bin/env bash
# Checks the import rules of ARCHITECTURE.md / STYLE.md with go list:
# - the pure algorithm packages import no client, server, Prometheus or
#   k8s.io/kubernetes code;
# - pkg/provider and pkg/autoscaler never import each other;
# - the packages split out of the controller (state, status, prediction, schedule,
#   telemetry) and the shard election never import pkg/autoscaler/controller;
# - nothing in the main module imports k8s.io/kubernetes;
# - pkg/ never imports cmd/ or test/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$PODPILOT_ROOT"

rc=0
fail() { log "import rule broken: $*"; rc=1; }
mod=github.com/podpilot/podpilot

deps() { go list -deps -f '{{.ImportPath}}' "$@"; }

for pkg in ./pkg/autoscaler/replicas ./pkg/autoscaler/normalize ./pkg/autoscaler/decision ./pkg/autoscaler/forecast ./pkg/autoscaler/calendar ./pkg/autoscaler/hpaconv ./pkg/autoscaler/shard; do
  bad=$(deps "$pkg" | grep -E '^(k8s\.io/client-go|k8s\.io/apiserver|k8s\.io/kubernetes|github\.com/prometheus/|sigs\.k8s\.io/custom-metrics-apiserver)' || true)
  [[ -z $bad ]] || fail "$pkg (pure) imports: $(echo $bad)"
  if grep -n 'time\.Now()' "$pkg"/*.go | grep -v _test.go | grep -v '^\S*doc.go' >/dev/null; then
    fail "$pkg (pure) calls time.Now()"
  fi
done
# The packages split out of the controller sit below it: the controller imports them, and none
# of them imports pkg/autoscaler/controller (the shard election drives it through its Owner interface).
for pkg in ./pkg/autoscaler/state ./pkg/autoscaler/status ./pkg/autoscaler/prediction ./pkg/autoscaler/schedule ./pkg/autoscaler/telemetry ./pkg/autoscaler/shard/election; do
  bad=$(deps "$pkg" | grep -x "$mod/pkg/autoscaler/controller" || true)
  [[ -z $bad ]] || fail "$pkg imports pkg/autoscaler/controller"
done
bad=$(deps ./pkg/provider/... | grep "^$mod/pkg/autoscaler" || true)
[[ -z $bad ]] || fail "pkg/provider imports pkg/autoscaler: $(echo $bad)"
bad=$(deps ./pkg/autoscaler/... | grep "^$mod/pkg/provider" || true)
[[ -z $bad ]] || fail "pkg/autoscaler imports pkg/provider: $(echo $bad)"
# pkg/replay is the algorithm without the controller: it may import the provider's rules and
# Prometheus client and the pure algorithm packages, but nothing that talks to a cluster.
bad=$(deps ./pkg/replay/... | grep -E "^(k8s\.io/client-go|k8s\.io/apiserver|$mod/pkg/autoscaler/(controller|metrics)|$mod/pkg/provider/metricsapi)" || true)
[[ -z $bad ]] || fail "pkg/replay (no cluster) imports: $(echo $bad)"
bad=$(deps ./... | grep '^k8s\.io/kubernetes' || true)
[[ -z $bad ]] || fail "the main module imports k8s.io/kubernetes: $(echo $bad)"
bad=$(deps ./pkg/... | grep -E "^$mod/(cmd|test)/" || true)
[[ -z $bad ]] || fail "pkg/ imports cmd/ or test/: $(echo $bad)"
# pkg/autoscaler/autoscalertest holds the tests' shared fixtures: no program may link it.
bad=$(deps $(go list ./cmd/... ./pkg/... | grep -v "^$mod/pkg/autoscaler/autoscalertest$") | grep "^$mod/pkg/autoscaler/autoscalertest" || true)
[[ -z $bad ]] || fail "non-test code imports pkg/autoscaler/autoscalertest"
[[ $rc == 0 ]] && log "import rules hold"
exit $rc
