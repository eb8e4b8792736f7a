package scenario

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/podpilot/podpilot/test/exporter"
)

// Load spreads a total per Deployment evenly over its running pods as the
// per-pod gauge bench_load{namespace,pod} and as the rate of the per-pod
// counter bench_step_total, following the pods as they come
// and go: Deployments scaled up get the same total, as a load balancer
// would spread it.
type Load struct {
	exp   *exporter.Exporter
	watch *Watch

	mu     sync.Mutex
	totals map[string]float64 // by ns/app
	pods   map[string][]string
}

// StartLoad starts refreshing the gauges every second until ctx ends.
func StartLoad(ctx context.Context, exp *exporter.Exporter, w *Watch) *Load {
	l := &Load{exp: exp, watch: w, totals: map[string]float64{}, pods: map[string][]string{}}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				l.refresh()
			}
		}
	}()
	return l
}

// Set sets the total of Deployment app in ns and updates its pods' gauges
// at once, so a step is served from the moment Set returns.
func (l *Load) Set(ns, app string, total float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := ns + "/" + app
	l.totals[key] = total
	l.apply(key)
}

// SetPerPod sets the total of each of apps in ns to perPod × baseReplicas.
func (l *Load) SetPerPod(ns string, apps []string, perPod float64) {
	for _, a := range apps {
		l.Set(ns, a, perPod*baseReplicas)
	}
}

func (l *Load) refresh() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range l.totals {
		l.apply(key)
	}
}

// apply sets key's gauges; l.mu is held.
func (l *Load) apply(key string) {
	ns, app, _ := strings.Cut(key, "/")
	pods := l.watch.RunningPods(ns, app)
	seen := make(map[string]bool, len(pods))
	if len(pods) > 0 {
		share := l.totals[key] / float64(len(pods))
		for _, p := range pods {
			l.exp.SetGauge(loadMetric, map[string]string{"namespace": ns, "pod": p}, share)
			l.exp.SetRate(stepCounter, map[string]string{"namespace": ns, "pod": p}, share)
			seen[p] = true
		}
	}
	for _, p := range l.pods[key] {
		if !seen[p] {
			l.exp.Delete(loadMetric, map[string]string{"namespace": ns, "pod": p})
			l.exp.Delete(stepCounter, map[string]string{"namespace": ns, "pod": p})
		}
	}
	l.pods[key] = pods
}
