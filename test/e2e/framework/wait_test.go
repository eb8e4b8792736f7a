package framework

import (
	"context"
	"errors"
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

// TestPollStoppedByItsCallerSaysSoAndHowLongItWaited: a bench interrupted after 8 minutes of a
// 36-minute wait reported "timed out after 36m20s", a wait it never made.
func TestPollStoppedByItsCallerSaysSoAndHowLongItWaited(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	err := PollEvery(ctx, time.Millisecond, time.Hour, "a state", func(context.Context) (bool, string, error) {
		cancel()
		return false, "desired 1", nil
	})
	if err == nil || !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "timed out") ||
		!strings.Contains(err.Error(), "stopped (context canceled) after 0s of 1h0m0s waiting for a state; last state: desired 1") {
		t.Errorf("Poll = %v; want it stopped by its caller, with the time it waited and the last state", err)
	}
}
