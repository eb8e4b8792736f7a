//go:build !faults

package controller

import "testing"

// checkTiming logs a broken timed promise: make test never fails on a timing (STYLE, "Performance
// is measured"); make test-faults asserts it (timing_faults_test.go).
func checkTiming(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Logf("timed promise broken (asserted only by make test-faults): "+format, args...)
	}
}
