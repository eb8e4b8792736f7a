#!/usr/bin/env bash
# Runs the e2e suite (test/e2e) for `make test-e2e`: one test binary, built
# with the keda tag, run as two streams at once. Each stream is its own
# process with its own local control plane (TestMain starts one per process),
# so the serial tests of one overlap those of the other: most of the suite's
# wall time is serial tests that wait on sync periods and windows, not CPU.
#
#   stream 1: every test but stream 2's;
#   stream 2: STREAM2 below, the long serial tests (about half the serial
#             seconds) and the KEDA test.
#
# Each stream's output goes to _output/e2e/stream-N.log and is printed whole
# when both have ended; the exit status is non-zero if either failed. Both
# streams run on a bin/podpilot that make built before this script
# (PODPILOT_E2E_BUILT tells TestMain not to rebuild it under the other).
#
# Environment:
#   E2E_TIMEOUT  each stream's -test.timeout (default 40m)
#   E2E_FLAGS    go test flags (for example -run TestX): with any, the suite
#                runs as one `go test` with them instead, as before the split
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$PODPILOT_ROOT"

TIMEOUT=${E2E_TIMEOUT:-40m}
STREAM2='^(TestDifferentialStockHPAAgainstPodAutoscaler|TestDifferentialMetricsOutageLongerThanTheWindow|TestReplayMatchesTheRealPodAutoscaler|TestMigrateFleet|TestScheduleWindowRaisesTheFloorThenMetricsGovern|TestKEDA.*)$'

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
log "e2e: stream 1 (all but $STREAM2) and stream 2 ($STREAM2), logs in $out"
run 1 -test.skip "$STREAM2" & pid1=$!
run 2 -test.run "$STREAM2" & pid2=$!
rc1=0 rc2=0
wait "$pid1" || rc1=$?
log "e2e: stream 1 ended (exit $rc1) after $((SECONDS - start)) s"
wait "$pid2" || rc2=$?
log "e2e: stream 2 ended (exit $rc2) after $((SECONDS - start)) s"
for n in 1 2; do
  echo "===== e2e stream $n: $out/stream-$n.log"
  cat "$out/stream-$n.log"
done
log "e2e: stream 1 exit $rc1, stream 2 exit $rc2, $((SECONDS - start)) s in all"
[[ $rc1 == 0 && $rc2 == 0 ]]
