package prediction

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

// keyOf is the model key of the i-th distinct history.
func keyOf(i int) modelKey {
	k := modelKey{window: 28 * 24 * time.Hour}
	k.Namespace, k.Metric = ns, fmt.Sprintf("Pods/metric_%d", i)
	return k
}

// daysOf is days of eveningRush at historyStep ending at now, with 5% noise.
func daysOf(days int) forecast.Series {
	r := rand.New(rand.NewPCG(1, 2))
	s := forecast.Series{Start: now.Add(-time.Duration(days) * 24 * time.Hour), Step: historyStep}
	for t := s.Start; t.Before(now); t = t.Add(historyStep) {
		s.Values = append(s.Values, math.Max(0, eveningRush(t)*(1+0.05*r.NormFloat64())))
	}
	return s
}

func TestTheModelCacheEvictsTheLeastRecentlyUsedPastItsBoundAndReportsItsSize(t *testing.T) {
	var sizes []int
	c := newModelCache(DefaultRefresh, 2, func(s CacheSize) { sizes = append(sizes, s.Entries) })
	s := forecast.Series{Start: now, Step: historyStep, Values: make([]float64, 100)}
	f := Fit{at: now, due: now.Add(DefaultRefresh)}
	c.keep(keyOf(0), s, f, now)
	c.keep(keyOf(1), s, f, now)
	if _, ok := c.use(keyOf(0)); !ok { // 0 is now used more recently than 1
		t.Fatal("key 0 not held")
	}
	c.keep(keyOf(2), s, f, now)
	var held []int
	for i := range 3 {
		if _, ok := c.use(keyOf(i)); ok {
			held = append(held, i)
		}
	}
	if diff := cmp.Diff([]int{0, 2}, held); diff != "" {
		t.Errorf("keys held (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 2, 2}, sizes); diff != "" {
		t.Errorf("sizes reported (-want +got):\n%s", diff)
	}
	if got := c.size(); got.Bytes < 2*400 || got.Entries != 2 {
		t.Errorf("size = %+v, want 2 entries of at least their 100 float32 values each", got)
	}
}

// BenchmarkMemoryPerPredictivePodAutoscaler is the heap one predictive PodAutoscaler's model
// keeps alive in the controller: its fit on 28 days at one minute and the history a refit
// extends, as the model cache holds them (one distinct history each). Reported as bytes/model.
func BenchmarkMemoryPerPredictivePodAutoscaler(b *testing.B) {
	const models = 8
	s := daysOf(28)
	var per float64
	for b.Loop() {
		c := newModelCache(DefaultRefresh, models, nil)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range models {
			own := forecast.Series{Start: s.Start, Step: s.Step, Values: append([]float64(nil), s.Values...)}
			m, err := forecast.Fit(own, forecast.HoltWinters)
			if err != nil {
				b.Fatal(err)
			}
			c.keep(keyOf(i), own, Fit{model: m, at: now, due: now.Add(DefaultRefresh)}, now)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per = float64(after.HeapAlloc-before.HeapAlloc) / models
		if got := c.size(); got.Entries != models {
			b.Fatalf("cache holds %d models, want %d", got.Entries, models)
		} else {
			b.ReportMetric(float64(got.Bytes)/models, "reported-bytes/model")
		}
	}
	b.ReportMetric(per, "bytes/model")
}
