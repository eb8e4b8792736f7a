package metrics

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// tally is a Counter that keeps its counts by source.
type tally struct {
	mu        sync.Mutex
	requested map[string]int
	called    map[string]int
}

func newTally() *tally { return &tally{requested: map[string]int{}, called: map[string]int{}} }

func (t *tally) Requested(source string) { t.mu.Lock(); t.requested[source]++; t.mu.Unlock() }
func (t *tally) Called(source string)    { t.mu.Lock(); t.called[source]++; t.mu.Unlock() }

func TestCounterSeesTheCallsThatSharingSaved(t *testing.T) {
	var calls atomic.Int32
	counts := newTally()
	usage := resourceFunc(func(context.Context, string) (*metricsv1beta1.PodMetricsList, error) {
		return &metricsv1beta1.PodMetricsList{}, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: countingCustom(&calls), Resource: usage, Counter: counts})
	ctx := t.Context()
	// Three autoscalers in one namespace ask for the same custom metric, and for cpu and memory.
	for range 3 {
		if _, err := f.PodMetric(ctx, "dns", "zdns_vanguard_qps", nil); err != nil {
			t.Fatal(err)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, err := f.ResourceMetric(ctx, "dns", r); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]int{SourceCustom: 3, SourceResource: 6}
	if diff := cmp.Diff(want, counts.requested); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	want = map[string]int{SourceCustom: 1, SourceResource: 1}
	if diff := cmp.Diff(want, counts.called); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
