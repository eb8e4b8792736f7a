package metrics

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWithFreshnessAsksAnewOnlyPastItsOwnAge checks the per-read freshness of a PodAutoscaler
// with a shorter sync period of its own: it takes no answer older than its freshness, and the
// answer it asks for serves the readers after it, so the calls stay one per query and age.
func TestWithFreshnessAsksAnewOnlyPastItsOwnAge(t *testing.T) {
	var calls atomic.Int32
	f, clk := newTestFetcher(t, FetcherConfig{External: queue(&calls), Freshness: 7500 * time.Millisecond})
	plain := t.Context()
	fast := WithFreshness(plain, 2500*time.Millisecond) // a 5 s syncPeriodSeconds
	steps := []struct {
		name      string
		after     time.Duration
		ctx       context.Context
		wantCalls int32
	}{
		{"the first read calls", 0, plain, 1},
		{"a reader with the fetcher's freshness reuses a 3 s old answer", 3 * time.Second, plain, 1},
		{"a reader with 2.5 s freshness asks anew for a 3 s old answer", 0, fast, 2},
		{"a second reader with 2.5 s freshness reuses that new answer", time.Second, fast, 2},
		{"a reader with the fetcher's freshness reuses it too", 0, plain, 2},
		{"past 2.5 s the fast reader asks anew once more", 2 * time.Second, fast, 3},
	}
	for _, s := range steps {
		clk.Step(s.after)
		if _, err := f.ExternalMetric(s.ctx, "dns", "queue_length", nil); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != s.wantCalls {
			t.Errorf("%s: %d calls, want %d", s.name, got, s.wantCalls)
		}
	}
}
