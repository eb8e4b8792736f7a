#!/usr/bin/env bash
# Runs the e2e suite (test/e2e) and the backend tier's CI set for `make
# test-e2e`, as three streams at once. Each stream has its own local control
# planes (one per test process), so the serial tests of one overlap those of
# the others: most of the suite's wall time is serial tests waiting on sync
# periods and windows, not CPU (load average 0.4-1.8 on 2 cores with two
# streams, 4 in the parallel phase).
#
#   stream 1: the e2e tests but stream 2's;
#   stream 2: STREAM2 below: the long serial tests (about half the serial
#             seconds) and the KEDA test (the binary is built with -tags keda);
#   stream 3: hack/test-backends.sh for E2E_BACKENDS: Thanos (a distributed
#             store built from its module) and Debian's VictoriaMetrics (the
#             floor). `make test-backends` runs all four backends.
#
# Each stream's output goes to _output/e2e/stream-N.log and is printed whole
# when all have ended; the exit status is non-zero if any failed. The e2e
# streams run the bin/podpilot make built before this script
# (PODPILOT_E2E_BUILT tells TestMain not to rebuild it under the other).
#
# Environment:
#   E2E_TIMEOUT   each e2e stream's -test.timeout (default 40m)
#   E2E_BACKENDS  stream 3's backends (default "thanos victoriametrics-debian";
#                 empty: no stream 3)
#   E2E_FLAGS     go test flags (for example -run TestX): with any, only the
#                 e2e suite runs, as one `go test` with them
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$PODPILOT_ROOT"

TIMEOUT=${E2E_TIMEOUT:-40m}
BACKENDS=${E2E_BACKENDS-thanos victoriametrics-debian}
STREAM2='^(TestDifferentialStockHPAAgainstPodAutoscaler|TestDifferentialMetricsOutageLongerThanTheWindow|TestReplayMatchesTheRealPodAutoscaler|TestMigrateFleet|TestScheduleWindowRaisesTheFloorThenMetricsGovern|TestFaultPrometheusGarbage|TestKEDA.*)$'

if [[ -n ${E2E_FLAGS:-} ]]; then
  # shellcheck disable=SC2086 # E2E_FLAGS is a list of flags
  exec go test -count=1 -timeout "$TIMEOUT" -parallel 8 -tags keda -v $E2E_FLAGS ./test/e2e/
fi

out=$PODPILOT_ROOT/_output/e2e
mkdir -p "$out"
go test -c -tags keda -o "$out/e2e.test" ./test/e2e/

# run N ARGS... runs the test binary as stream N, as go test would (in the
# package's directory), logging to stream-N.log.
run() {
  local n=$1; shift
  (cd test/e2e && PODPILOT_E2E_BUILT=1 exec "$out/e2e.test" -test.count=1 -test.timeout "$TIMEOUT" \
    -test.parallel 8 -test.v "$@") >"$out/stream-$n.log" 2>&1
}

start=$SECONDS
streams=(1 2)
log "e2e: stream 1 (all but $STREAM2) and stream 2 ($STREAM2), logs in $out"
run 1 -test.skip "$STREAM2" & pids=($!)
run 2 -test.run "$STREAM2" & pids+=($!)
if [[ -n $BACKENDS ]]; then
  streams+=(3)
  log "e2e: stream 3: the backend tier for $BACKENDS (hack/test-backends.sh)"
  PODPILOT_E2E_BUILT=1 BACKENDS=$BACKENDS BACKENDS_LOGS=$out/backends "$PODPILOT_ROOT/hack/test-backends.sh" >"$out/stream-3.log" 2>&1 &
  pids+=($!)
fi
failed=()
for i in "${!streams[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  [[ $rc == 0 ]] || failed+=("stream ${streams[$i]} (exit $rc)")
done
for n in "${streams[@]}"; do
  echo "===== e2e stream $n: $out/stream-$n.log (ended $(date -r "$out/stream-$n.log" +%H:%M:%S))"
  cat "$out/stream-$n.log"
done
if [[ -n $BACKENDS ]]; then
  for f in "$out"/backends/*.log; do echo "===== backend tier: $f"; cat "$f"; done
fi
log "e2e: ${#streams[@]} streams in $((SECONDS - start)) s; failed: ${failed[*]:-none}"
[[ ${#failed[@]} == 0 ]]
