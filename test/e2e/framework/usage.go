package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/podpilot/podpilot/test/exporter"
)

// Usage exports cAdvisor-like per-container resource usage for every Running
// pod of a workload, as a kubelet's cAdvisor would for Prometheus:
// container_cpu_usage_seconds_total (a counter growing by the pod's cpu cores
// every second) and container_memory_working_set_bytes, both labelled
// namespace, pod and container ("app", the framework's container name).
type Usage struct {
	exp     *exporter.Server
	ns, app string
	mu      sync.Mutex
	cores   float64
	bytes   float64
	stop    context.CancelFunc
	done    chan struct{}
}

// NewUsage starts exporting usage for the pods labelled app=app in ns.
func (c *Cluster) NewUsage(ctx context.Context, exp *exporter.Server, ns, app string, cores, bytes float64) *Usage {
	ctx, cancel := context.WithCancel(ctx)
	u := &Usage{exp: exp, ns: ns, app: app, cores: cores, bytes: bytes, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			if pods, err := c.RunningPods(ctx, ns, app); err == nil {
				u.mu.Lock()
				for _, p := range pods {
					labels := map[string]string{"namespace": ns, "pod": p.Name, "container": "app"}
					exp.SetRate("container_cpu_usage_seconds_total", labels, u.cores)
					exp.SetGauge("container_memory_working_set_bytes", labels, u.bytes)
				}
				u.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return u
}

// Set changes every pod's usage: cpu in cores, memory in bytes.
func (u *Usage) Set(cores, bytes float64) {
	u.mu.Lock()
	u.cores, u.bytes = cores, bytes
	u.mu.Unlock()
}

// Stop stops following the workload.
func (u *Usage) Stop() {
	u.stop()
	<-u.done
}

// ResourceRulesYAML are prometheus-adapter-style resourceRules over the
// cAdvisor series Usage exports, for podpilot to serve metrics.k8s.io. For
// the kubelet's own cAdvisor series use KubeletResourceRulesYAML.
func ResourceRulesYAML() string { return resourceRulesYAML("rate") }

// KubeletResourceRulesYAML are ResourceRulesYAML for the kubelet's own
// cAdvisor series (/metrics/cadvisor on a real node), whose samples carry
// cAdvisor's timestamps, one per housekeeping (10–15 s), however often
// Prometheus scrapes: cpu is irate, the last two samples, as metrics-server
// computes it from the same kubelet. A rate over 1m there reads low whenever
// the freshest sample is more than 1.1 intervals old (up to an interval plus
// a scrape), since Prometheus then extrapolates only half an interval to the
// window's end: on the real node it read a steady 232m pod as 148–199m at
// times (TestResourceMetricsAgreeWithMetricsServer).
func KubeletResourceRulesYAML() string { return resourceRulesYAML("irate") }

// resourceRulesYAML are the resourceRules with cpu read by cpuFunc (rate or
// irate) over 1m.
func resourceRulesYAML(cpuFunc string) string {
	return fmt.Sprintf(`resourceRules:
  cpu:
    containerQuery: sum(%[1]s(container_cpu_usage_seconds_total{<<.LabelMatchers>>,container!=""}[1m])) by (<<.GroupBy>>)
    nodeQuery: sum(%[1]s(container_cpu_usage_seconds_total{<<.LabelMatchers>>,id="/"}[1m])) by (<<.GroupBy>>)
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  memory:
    containerQuery: sum(container_memory_working_set_bytes{<<.LabelMatchers>>,container!=""}) by (<<.GroupBy>>)
    nodeQuery: sum(container_memory_working_set_bytes{<<.LabelMatchers>>,id="/"}) by (<<.GroupBy>>)
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  window: 1m
`, cpuFunc)
}
