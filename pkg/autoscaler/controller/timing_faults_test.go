//go:build faults

package controller

import "testing"

// checkTiming fails the test on a broken timed promise under the faults build tag (make
// test-faults).
func checkTiming(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf("timed promise broken: "+format, args...)
	}
}
