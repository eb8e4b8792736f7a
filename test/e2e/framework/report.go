package framework

import (
	"fmt"
	"testing"
)

// Report prints a figure line "<KIND> <name>: <text>" to the test log and to stdout, so that
// `go test -v … | grep ^<KIND>` collects a suite's figures (FAULT in test/e2e, NODE in test/node).
func Report(t *testing.T, kind, name, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("%s %s: %s", kind, name, fmt.Sprintf(format, args...))
	t.Log(line)
	fmt.Println(line)
}

// CheckTiming fails the test if a timed promise is broken and strict is set (the faults build
// tag); otherwise it logs the miss, so a suite without the tag never fails on a timing. where
// names the command that asserts it.
func CheckTiming(t *testing.T, strict, ok bool, where, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	if strict {
		t.Errorf("timed promise broken: "+format, args...)
		return
	}
	t.Logf("timed promise broken (asserted only by "+where+"): "+format, args...)
}
