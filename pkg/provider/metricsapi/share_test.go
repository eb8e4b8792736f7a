package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// servedCounts counts sharedQueries' answers by what served them.
type servedCounts struct{ prometheus, inFlight, cache atomic.Int32 }

func (c *servedCounts) count(_, servedBy string) {
	switch servedBy {
	case servedByPrometheus:
		c.prometheus.Add(1)
	case servedByInFlight:
		c.inFlight.Add(1)
	case servedByCache:
		c.cache.Add(1)
	}
}

func TestConcurrentIdenticalRequestsShareOneQuery(t *testing.T) {
	const n = 20
	var counts servedCounts
	c := mustShareQueries[int](t, testingclock.NewFakeClock(testNow), time.Second, counts.count)
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	got := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { got[i], errs[i] = c.get(t.Context(), "default", "q", true, fetch) })
	}
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return counts.prometheus.Load()+counts.inFlight.Load() == n, nil
	})
	if err != nil {
		t.Fatalf("requests did not all arrive: %v", err)
	}
	close(release)
	wg.Wait()
	for i := range n {
		if got[i] != 42 || errs[i] != nil {
			t.Errorf("request %d = %d, %v; want 42", i, got[i], errs[i])
		}
	}
	if calls.Load() != 1 || counts.prometheus.Load() != 1 || counts.inFlight.Load() != n-1 {
		t.Errorf("queries sent = %d (counted %d), in flight = %d; want 1, 1, %d",
			calls.Load(), counts.prometheus.Load(), counts.inFlight.Load(), n-1)
	}
}

func TestAnswersAreReusedOnlyUntilMaxAge(t *testing.T) {
	clk := testingclock.NewFakeClock(testNow)
	var counts servedCounts
	c := mustShareQueries[int](t, clk, 5*time.Second, counts.count)
	var calls atomic.Int32
	fetch := func(context.Context) (int, error) { return int(calls.Add(1)), nil }
	steps := []struct {
		advance time.Duration
		want    int
	}{
		{0, 1},
		{4999 * time.Millisecond, 1}, // younger than the max age: reused
		{time.Millisecond, 2},        // exactly the max age: a new query
		{time.Second, 2},
	}
	for _, step := range steps {
		clk.Step(step.advance)
		got, err := c.get(t.Context(), "default", "q", true, fetch)
		if err != nil || got != step.want {
			t.Fatalf("after %s: get = %d, %v; want answer %d", clk.Since(testNow), got, err, step.want)
		}
	}
	if v, err := c.get(t.Context(), "default", "other", true, fetch); err != nil || v != 3 {
		t.Errorf("another key = %d, %v; want its own query", v, err)
	}
}

func TestErrorsAreNotKeptBeyondTheCallInFlight(t *testing.T) {
	var counts servedCounts
	c := mustShareQueries[int](t, testingclock.NewFakeClock(testNow), time.Minute, counts.count)
	errDown := errors.New("prometheus down")
	fail := true
	fetch := func(context.Context) (int, error) {
		if fail {
			return 0, errDown
		}
		return 7, nil
	}
	if _, err := c.get(t.Context(), "default", "q", true, fetch); !errors.Is(err, errDown) {
		t.Fatalf("first get = %v, want the error", err)
	}
	fail = false
	if got, err := c.get(t.Context(), "default", "q", true, fetch); err != nil || got != 7 {
		t.Fatalf("get after a failure = %d, %v; want a new query's answer", got, err)
	}
	if counts.prometheus.Load() != 2 || counts.cache.Load() != 0 {
		t.Errorf("sent %d, from cache %d; want 2 sent, none from cache", counts.prometheus.Load(), counts.cache.Load())
	}
}

func TestZeroMaxAgeSendsEveryQuery(t *testing.T) {
	var counts servedCounts
	c := mustShareQueries[int](t, testingclock.NewFakeClock(testNow), 0, counts.count)
	for range 3 {
		if _, err := c.get(t.Context(), "default", "q", true, func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if counts.prometheus.Load() != 3 {
		t.Errorf("sent %d, want 3", counts.prometheus.Load())
	}
}

func TestAWaiterWhoseContextEndsStopsWaitingWithoutFailingOthers(t *testing.T) {
	var counts servedCounts
	c := mustShareQueries[int](t, testingclock.NewFakeClock(testNow), time.Minute, counts.count)
	release := make(chan struct{})
	fetch := func(ctx context.Context) (int, error) {
		<-release
		return 1, ctx.Err() // the detached call is not canceled with its first caller
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.get(ctx, "default", "q", true, fetch); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled get = %v, want context.Canceled", err)
	}
	close(release)
	if got, err := c.get(t.Context(), "default", "q", true, fetch); err != nil || got != 1 {
		t.Errorf("next get = %d, %v; want the shared answer", got, err)
	}
}

func TestRequestsWithDifferentSelectorsShareTheNamespaceQuery(t *testing.T) {
	t1 := testNow.Add(-10 * time.Second)
	prom := &fakeProm{series: seedSeries(), query: func(string) (model.Vector, error) {
		return model.Vector{sample(1.5, t1, "pod", "p1"), sample(2, t1, "pod", "p2"), sample(3, t1, "pod", "p3")}, nil
	}}
	p, _ := testProvider(t, prom, "",
		pod("ns", "p1", map[string]string{"app": "a"}), pod("ns", "p2", map[string]string{"app": "b"}),
		pod("ns", "p3", map[string]string{"app": "b"}))
	p.customQueries = mustShareQueries[objectSamples](t, p.clock, time.Minute, p.metrics.queryCounter(apiCustom))
	p.refresh(t.Context())
	p.objects.start(t.Context())
	t.Cleanup(stopInformers(p))

	info := qpsPod
	wantNames := map[string][]string{"app=a": {"p1"}, "app=b": {"p2", "p3"}, "": {"p1", "p2", "p3"}}
	for _, sel := range []string{"app=a", "app=b", ""} {
		selector, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		list, err := p.GetMetricBySelector(t.Context(), "ns", selector, info, labels.Everything())
		if err != nil {
			t.Fatalf("selector %q: %v", sel, err)
		}
		var got []string
		for _, v := range list.Items {
			got = append(got, v.DescribedObject.Name)
		}
		if strings.Join(got, ",") != strings.Join(wantNames[sel], ",") {
			t.Errorf("selector %q served %v, want %v", sel, got, wantNames[sel])
		}
	}
	if len(prom.queries) != 1 || !strings.Contains(prom.queries[0], `pod!=""`) {
		t.Errorf("queries = %q, want one whole-namespace query", prom.queries)
	}
	if got := counterValue(t, p.metrics.queryRequests, apiCustom, "default", servedByCache); got != 2 {
		t.Errorf("requests served from the cache = %v, want 2", got)
	}
}

func TestFreshReadsShareInFlightQueriesButNeverReuseAnswers(t *testing.T) {
	var counts servedCounts
	c := mustShareQueries[int](t, testingclock.NewFakeClock(testNow), time.Minute, counts.count)
	var calls atomic.Int32
	fetch := func(context.Context) (int, error) { return int(calls.Add(1)), nil }
	if got, _ := c.get(t.Context(), "default", "q", false, fetch); got != 1 {
		t.Fatalf("fresh read = %d, want 1", got)
	}
	if got, _ := c.get(t.Context(), "default", "q", false, fetch); got != 2 {
		t.Errorf("second fresh read = %d, want a new query", got)
	}
	if got, _ := c.get(t.Context(), "default", "q", true, fetch); got != 2 {
		t.Errorf("reusing read = %d, want the fresh read's answer", got)
	}
}

func TestASharedQueryPrometheusRejectsIsAskedAgainByName(t *testing.T) {
	t1 := testNow.Add(-10 * time.Second)
	tooMany := fmt.Errorf("query: %w: %w", prometheus.ErrBadQuery, errors.New("query processing would load too many samples into memory"))
	tests := []struct {
		name        string
		answer      func(q string) (model.Vector, error)
		wantCode    int
		wantQueries []string // fragments, one per query, in order
	}{
		{
			name: "a namespace too large for the sample limit is asked by name, as without sharing",
			answer: func(q string) (model.Vector, error) {
				if strings.Contains(q, `pod!=""`) {
					return nil, tooMany
				}
				return model.Vector{sample(2, t1, "pod", "p1")}, nil
			},
			wantCode:    http.StatusOK,
			wantQueries: []string{`pod!=""`, `pod="p1"`},
		},
		{
			name:        "a query every form of which is rejected (a rule bug) answers the unshared query's error",
			answer:      answer(nil, tooMany),
			wantCode:    http.StatusInternalServerError,
			wantQueries: []string{`pod!=""`, `pod="p1"`},
		},
		{
			name:        "Prometheus unavailable is not retried",
			answer:      answer(nil, fmt.Errorf("query: %w", prometheus.ErrUnavailable)),
			wantCode:    http.StatusServiceUnavailable,
			wantQueries: []string{`pod!=""`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: seedSeries(), query: tt.answer}
			p := defaultProvider(t, prom, "", pod("ns", "p1", map[string]string{"app": "a"}), pod("ns", "p2", map[string]string{"app": "b"}))
			_, err := p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "a"}), qpsPod, labels.Everything())
			checkStatus(t, err, tt.wantCode)
			if len(prom.queries) != len(tt.wantQueries) {
				t.Fatalf("queries = %q, want %d", prom.queries, len(tt.wantQueries))
			}
			for i, frag := range tt.wantQueries {
				if !strings.Contains(prom.queries[i], frag) {
					t.Errorf("query %d = %q, want it to contain %q", i, prom.queries[i], frag)
				}
			}
		})
	}
}

func mustShareQueries[V any](t *testing.T, clk clock.PassiveClock, maxAge time.Duration, count func(string, string)) *sharedQueries[V] {
	t.Helper()
	c, err := newSharedQueries[V](clk, maxAge, count)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
