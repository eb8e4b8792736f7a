package framework

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/podpilot/podpilot/test/exporter"
)

// Load spreads a total rate evenly over the Running pods of a workload, the
// way a load balancer would, by setting each pod's series in an exporter.
// It follows the workload as it scales.
type Load struct {
	c        *Cluster
	exp      *exporter.Server
	ns, app  string
	metric   string
	counter  bool
	extra    map[string]string
	mu       sync.Mutex
	total    float64
	lastPods map[string]bool
	stop     context.CancelFunc
	done     chan struct{}
}

// NewLoad starts spreading load over the pods labelled app=app in ns as the
// per-pod metric metric{namespace,pod}: a gauge holding each pod's share, or,
// if counter is set, a counter growing by it every second.
func (c *Cluster) NewLoad(ctx context.Context, exp *exporter.Server, ns, app, metric string, counter bool) *Load {
	return c.newLoad(ctx, exp, ns, app, metric, counter, nil)
}

// NewCPULoad spreads a total of cpu cores over the Running pods labelled
// app=app in ns, as the cAdvisor counter container_cpu_usage_seconds_total
// of their container "app", which ResourceRulesYAML serves as the pods' cpu
// usage in metrics.k8s.io. Set takes cores.
func (c *Cluster) NewCPULoad(ctx context.Context, exp *exporter.Server, ns, app string) *Load {
	return c.newLoad(ctx, exp, ns, app, "container_cpu_usage_seconds_total", true, map[string]string{"container": "app"})
}

func (c *Cluster) newLoad(ctx context.Context, exp *exporter.Server, ns, app, metric string, counter bool, extra map[string]string) *Load {
	ctx, cancel := context.WithCancel(ctx)
	l := &Load{c: c, exp: exp, ns: ns, app: app, metric: metric, counter: counter, extra: extra,
		lastPods: map[string]bool{}, stop: cancel, done: make(chan struct{})}
	go l.run(ctx)
	return l
}

// Set changes the total load.
func (l *Load) Set(total float64) {
	l.mu.Lock()
	l.total = total
	l.mu.Unlock()
}

// PerPod is the share each of n pods gets of total, as Load sets it.
func PerPod(total float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return math.Round(total/float64(n)*1000) / 1000
}

// Stop stops following the workload; the series keep their last values.
func (l *Load) Stop() {
	l.stop()
	<-l.done
}

func (l *Load) run(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		l.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (l *Load) tick(ctx context.Context) {
	pods, err := l.c.RunningPods(ctx, l.ns, l.app)
	if err != nil {
		return
	}
	l.mu.Lock()
	share := PerPod(l.total, len(pods))
	l.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range pods {
		labels := l.labels(p.Name)
		if l.counter {
			l.exp.SetRate(l.metric, labels, share)
		} else {
			l.exp.SetGauge(l.metric, labels, share)
		}
		seen[p.Name] = true
	}
	for name := range l.lastPods {
		if !seen[name] {
			l.exp.Delete(l.metric, l.labels(name))
		}
	}
	l.lastPods = seen
}

// labels are the labels of pod's series.
func (l *Load) labels(pod string) map[string]string {
	labels := map[string]string{"namespace": l.ns, "pod": pod}
	for k, v := range l.extra {
		labels[k] = v
	}
	return labels
}
