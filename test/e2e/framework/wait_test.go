package framework

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPollKeepsTheLastStateWhenTheTimeoutCutsAPollShort: a condition whose last call fails only
// because the timeout cancelled it must not replace the state it reported before (a CI failure
// read "last state: error: context deadline exceeded" and nothing else).
func TestPollKeepsTheLastStateWhenTheTimeoutCutsAPollShort(t *testing.T) {
	calls := 0
	err := PollEvery(t.Context(), time.Millisecond, 50*time.Millisecond, "a state", func(ctx context.Context) (bool, string, error) {
		if calls++; calls == 1 {
			return false, "desired 1", nil
		}
		<-ctx.Done() // a request in flight when the timeout fires
		return false, "", ctx.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "last state: desired 1 (then error: context deadline exceeded)") {
		t.Errorf("Poll = %v; want the timeout with the last state the condition reported", err)
	}
}
