#!/usr/bin/env bash
# The backend tier: the e2e cases that matter against each backend podpilot
# may query (docs/backends.md), one local cluster per backend
# (hack/local-up.sh's PODPILOT_BACKEND), the tests of test/e2e/backends_test.go
# (build tag backends) plus the metrics-API, PodAutoscaler and fault cases
# named in BACKEND_TESTS. Prints each backend's wall time and result, and
# exits non-zero if any failed. `make test-backends` builds what it needs.
#
# Environment:
#   BACKENDS       which to run, of: prometheus victoriametrics
#                  victoriametrics-debian (Debian's package, the floor) thanos
#                  (default: all four)
#   BACKENDS_LOGS  where each backend's go test output goes (default _output/backends)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BACKENDS=${BACKENDS:-prometheus victoriametrics victoriametrics-debian thanos}
LOGS=${BACKENDS_LOGS:-$PODPILOT_ROOT/_output/backends}
BACKEND_TESTS='^(TestBackend.*|TestCustomMetricsAPIServesExporterValues|TestCustomMetricsAPIServesCounterAsPerSecondRate|TestExternalMetricsAPIServesSeries|TestResourceMetricsAPIServesPodUsageFromPrometheus|TestPodAutoscalerScalesDeploymentOnCustomMetric|TestPodAutoscalerScalesStatefulSetOnObjectMetric|TestFaultPrometheusSlow|TestFaultPrometheusPartialAnswer)$'

mkdir -p "$LOGS"
summary=() failed=0
for b in $BACKENDS; do
  env=(PODPILOT_BACKEND="$b")
  case $b in
    prometheus | thanos) ;;
    victoriametrics) env+=(VICTORIAMETRICS_BIN="$VICTORIAMETRICS") ;;
    victoriametrics-debian) env=(PODPILOT_BACKEND=victoriametrics VICTORIAMETRICS_BIN="$(command -v victoria-metrics || echo /usr/bin/victoria-metrics)") ;;
    *) die "BACKENDS: unknown backend $b (want prometheus, victoriametrics, victoriametrics-debian or thanos)" ;;
  esac
  log "backend $b: go test -tags backends (log $LOGS/$b.log)"
  start=$SECONDS rc=0
  (cd "$PODPILOT_ROOT" && env "${env[@]}" go test -count=1 -tags backends -timeout 30m -parallel 8 -v \
    -run "$BACKEND_TESTS" ./test/e2e/) >"$LOGS/$b.log" 2>&1 || rc=$?
  result=ok; if [[ $rc != 0 ]]; then result="FAIL (exit $rc)"; failed=1; fi
  summary+=("$(printf '%-24s %5ds  %s' "$b" $((SECONDS - start)) "$result")")
  grep -E '^\s*(--- FAIL|BACKEND|FAULT)' "$LOGS/$b.log" | sed "s/^/  [$b] /" >&2 || true
done
log "backend tier:"
printf '  %s\n' "${summary[@]}" >&2
exit $failed
