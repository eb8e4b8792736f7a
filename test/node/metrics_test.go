package node

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Tolerances of podpilot's metrics.k8s.io against metrics-server for the
// same pods. Both read the kubelet's cAdvisor numbers, over different
// windows: podpilot a 1m rate of Prometheus' 1s scrapes, metrics-server the
// last two of its own scrapes (10s apart). Memory is compared reading by
// reading (within a second of each other); cpu over the same minute, the
// mean of metrics-server's readings in it against podpilot's rate at its end
// (reading by reading, the busy pods' 10s bursts differed by up to 27%).
const (
	memoryTolerance   = 0.10 // relative
	cpuTolerance      = 0.35 // relative …
	cpuFloorMillicore = 15   // … or this many millicores, whichever is larger
)

// usage is one pod's cpu (millicores) and memory (bytes).
type usage struct{ cpu, memory float64 }

func podUsage(list *metricsv1beta1.PodMetricsList) map[string]usage {
	out := map[string]usage{}
	for _, p := range list.Items {
		var u usage
		for _, c := range p.Containers {
			u.cpu += float64(c.Usage.Cpu().MilliValue())
			u.memory += c.Usage.Memory().AsApproximateFloat64()
		}
		out[p.Name] = u
	}
	return out
}

// podpilotPodMetrics reads metrics.k8s.io for ns through the kube-apiserver,
// where the chart registered podpilot for it.
func podpilotPodMetrics(ctx context.Context, ns string) (*metricsv1beta1.PodMetricsList, error) {
	b, err := cluster.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+ns+"/pods")
	if err != nil {
		return nil, err
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("decode pod metrics: %w", err)
	}
	return &list, nil
}

// keepBusy makes podpilot's pods spend cpu until ctx ends: a few clients
// asking the metrics APIs (which query Prometheus) in a loop.
func keepBusy(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = cluster.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+podpilotNS+"/pods")
				_, _ = cluster.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+podpilotNS+"/pods/*/process_cpu_seconds_per_second")
			}
		})
	}
	return &wg
}

// TestResourceMetricsAgreeWithMetricsServer serves metrics.k8s.io from the
// kubelet's cAdvisor series that Prometheus found through the API, and
// compares it, pod by pod, with metrics-server reading the same kubelet:
// podpilot's own pods, kept busy. It also checks `kubectl top`.
func TestResourceMetricsAgreeWithMetricsServer(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	ensurePodpilot(ctx, t)
	ms, err := cluster.StartMetricsServer(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ms.Stop)
	busy, stop := context.WithCancel(ctx)
	wg := keepBusy(busy)
	defer func() { stop(); wg.Wait() }()

	// podpilot's rate needs a full 1m window of the pods' series.
	framework.WaitFor(ctx, t, 3*time.Minute, "both serve cpu and memory of podpilot's pods", func(ctx context.Context) (bool, string, error) {
		a, errA := podpilotPodMetrics(ctx, podpilotNS)
		b, errB := ms.PodMetrics(ctx, podpilotNS)
		if errA != nil || errB != nil {
			return false, fmt.Sprintf("podpilot: %v; metrics-server: %v", errA, errB), nil
		}
		return len(a.Items) == 2 && len(b.Items) == 2, fmt.Sprintf("podpilot %d pods, metrics-server %d", len(a.Items), len(b.Items)), nil
	})
	pods, err := podpilotPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Let the 1m rate see a full window, and metrics-server's 10s
	// resolution one more reading once the pods' memory has settled.
	if age := time.Since(pods[0].CreationTimestamp.Time); age < 85*time.Second {
		time.Sleep(85*time.Second - age)
	}
	// Memory is compared reading by reading. cpu over the same window: a
	// minute of metrics-server's readings (each the usage over its last ~10s)
	// averaged, against podpilot's 1m rate read at the minute's end.
	var worstCPU, worstMem float64
	msCPU := map[string]map[time.Time]float64{} // pod → reading's timestamp → millicores
	start := time.Now()
	for i := 0; ; i++ {
		a, err := podpilotPodMetrics(ctx, podpilotNS)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ms.PodMetrics(ctx, podpilotNS)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range b.Items {
			if msCPU[item.Name] == nil {
				msCPU[item.Name] = map[time.Time]float64{}
			}
			msCPU[item.Name][item.Timestamp.Time] = podUsage(&metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{item}})[item.Name].cpu
		}
		pp, ref := podUsage(a), podUsage(b)
		for pod, r := range ref {
			p, ok := pp[pod]
			if !ok {
				t.Errorf("podpilot serves no metrics for pod %s, metrics-server does", pod)
				continue
			}
			dMem := math.Abs(p.memory-r.memory) / r.memory
			worstMem = math.Max(worstMem, dMem)
			fmt.Printf("NODE metrics sample %d %s: cpu podpilot %.0fm (1m) metrics-server %.0fm (10s); memory podpilot %.1fMi metrics-server %.1fMi (%.1f%%)\n",
				i, pod, p.cpu, r.cpu, p.memory/(1<<20), r.memory/(1<<20), 100*dMem)
			if dMem > memoryTolerance {
				t.Errorf("pod %s: memory %.1fMi from podpilot, %.1fMi from metrics-server: beyond %.0f%%", pod, p.memory/(1<<20), r.memory/(1<<20), 100*memoryTolerance)
			}
		}
		if time.Since(start) < time.Minute {
			time.Sleep(5 * time.Second)
			continue
		}
		end := time.Now()
		for pod, p := range pp {
			var sum float64
			var n int
			for at, c := range msCPU[pod] {
				if end.Sub(at) <= time.Minute {
					sum, n = sum+c, n+1
				}
			}
			if n == 0 {
				t.Errorf("metrics-server gave no reading of pod %s in the last minute", pod)
				continue
			}
			mean := sum / float64(n)
			dCPU := math.Abs(p.cpu - mean)
			worstCPU = math.Max(worstCPU, dCPU/math.Max(mean, 1))
			fmt.Printf("NODE metrics cpu %s: podpilot %.0fm (1m rate), metrics-server %.0fm (mean of its %d readings in the minute)\n", pod, p.cpu, mean, n)
			if dCPU > math.Max(cpuTolerance*mean, cpuFloorMillicore) {
				t.Errorf("pod %s: cpu %.0fm from podpilot (1m), %.0fm from metrics-server (mean of %d readings over the minute): beyond %.0f%% or %dm",
					pod, p.cpu, mean, n, 100*cpuTolerance, cpuFloorMillicore)
			}
		}
		break
	}
	fmt.Printf("NODE metrics: podpilot vs metrics-server, 2 pods: cpu over the same minute %.0f%%; memory, worst of the readings %.1f%%\n", 100*worstCPU, 100*worstMem)
	checkKubectlTop(ctx, t)
}

// checkKubectlTop checks that `kubectl top` shows real, non-zero values for
// podpilot's pods and the node, from podpilot's metrics.k8s.io.
func checkKubectlTop(ctx context.Context, t *testing.T) {
	t.Helper()
	// kubectl top pods: NAME CPU MEMORY; kubectl top nodes: NAME CPU CPU% MEMORY MEMORY%.
	for _, args := range [][]string{{"top", "pods", "-n", podpilotNS, "--no-headers"}, {"top", "nodes", "--no-headers"}} {
		memCol := 2
		if args[1] == "nodes" {
			memCol = 3
		}
		out, err := cluster.Kubectl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) <= memCol {
				t.Errorf("kubectl %s: unexpected line %q", strings.Join(args, " "), line)
				continue
			}
			cpu, errC := resource.ParseQuantity(f[1])
			mem, errM := resource.ParseQuantity(f[memCol])
			if errC != nil || errM != nil || mem.IsZero() || (args[1] == "nodes" && cpu.IsZero()) {
				t.Errorf("kubectl %s: %q shows no real cpu and memory", strings.Join(args, " "), line)
			}
		}
	}
}
