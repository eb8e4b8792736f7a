package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
)

// slowLandings is a SampleTimeSource whose data lands every interval (whole seconds) from now on and which
// answers only once the test opens the gate of the round that asked: Prometheus answers after
// the round that started the check has ended. It counts the asks.
type slowLandings struct {
	clock    *clocktesting.FakeClock
	interval time.Duration

	mu   sync.Mutex
	gate chan struct{}
	asks int
}

// open returns the gate of the next round's asks, to close once that round has ended.
func (s *slowLandings) open() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = make(chan struct{})
	return s.gate
}

func (s *slowLandings) LastSample(context.Context, string, provider.CustomMetricInfo, labels.Selector) (time.Time, error) {
	s.mu.Lock()
	s.asks++
	gate := s.gate
	s.mu.Unlock()
	<-gate
	since := s.clock.Now().Sub(now)
	return s.clock.Now().Add(-(since % s.interval)), nil
}

func (s *slowLandings) LastExternalSample(ctx context.Context, ns string, _ labels.Selector, info provider.ExternalMetricInfo) (time.Time, error) {
	return s.LastSample(ctx, ns, provider.CustomMetricInfo{Metric: info.Metric}, nil)
}

func (s *slowLandings) asked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asks
}

var _ metrics.SampleTimeSource = (*slowLandings)(nil)

// requeues is a work queue that records the delay of the last AddAfter instead of waiting it.
type requeues struct {
	roundQueue
	next time.Duration
}

func (q *requeues) AddAfter(_ cache.ObjectName, d time.Duration) { q.next = d }

// TestAShardedPodAutoscalerLearnsItsScrapeCadenceAsAnUnshardedOne (KEP-6003 under
// --autoscaler-shards): a round's background check of its metric's landings outlives the round.
// Under bucket ownership a round runs under a context of its own that ends with the round; a
// check started by nextRound under it was cut off as soon as the round ended, before Prometheus
// answered, so the cadence was never learnt: every round asked Prometheus again (twice the
// queries of a 2 s PodAutoscaler) and no round was aligned to the landings.
func TestAShardedPodAutoscalerLearnsItsScrapeCadenceAsAnUnshardedOne(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		for _, period := range []int32{1, 2, 10} {
			t.Run(fmt.Sprintf("sharded %t, syncPeriodSeconds %d", sharded, period), func(t *testing.T) {
				f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2), syncEvery(period)))...)
				if sharded {
					f.ownership = &ownedKeys{ctx: t.Context(), keys: map[cache.ObjectName]bool{paKey: true}}
					f.restart()
				}
				src := &slowLandings{clock: f.clock, interval: 2 * time.Second}
				tr, err := metrics.NewScrapeTracker(metrics.ScrapeTrackerConfig{Source: src, Clock: f.clock, Freshness: time.Second, Timeout: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				f.ctrl.scrapes = tr
				tm := f.ctrl.term.Load()
				q := &requeues{roundQueue: tm.queue}
				tm.queue = q
				rounds, unaligned, end := 0, 0, now.Add(time.Minute)
				for f.clock.Now().Before(end) {
					f.seedCaches() // the informers see the status the last round wrote
					gate := src.open()
					q.next = 0
					f.ctrl.syncAndRequeue(t.Context(), tm, paKey)
					close(gate)
					tr.Wait()
					if q.next <= 0 {
						t.Fatalf("round %d not requeued for a next round", rounds)
					}
					rounds++
					if f.clock.Since(now) > 30*time.Second && f.clock.Since(now)%time.Second != DefaultScrapeMargin {
						unaligned++
					}
					f.clock.Step(q.next)
				}
				want := 60 / int(period)
				if rounds < want-1 || rounds > want+1 {
					t.Errorf("%d rounds in a minute, want about %d", rounds, want)
				}
				if unaligned > 0 {
					t.Errorf("%d rounds of the last 30 s not %s after the landing grid, want none: the rounds follow the landings once learnt", unaligned, DefaultScrapeMargin)
				}
				// Two answers teach the cadence; it is checked again once per refresh (2 min).
				if asks := src.asked(); asks > 3 {
					t.Errorf("asked Prometheus for the landings %d times in %d rounds, want at most 3: the cadence was not learnt", asks, rounds)
				}
			})
		}
	}
}
