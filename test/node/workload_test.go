package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// loadMetric is the per-pod gauge the Day 2 workloads scale on; podpilot's
// default rules serve it under its own name.
const loadMetric = "node_test_load"

// scaled is a Deployment of real pods scaled by a PodAutoscaler on a
// per-pod load the test sets (target 100 per pod).
type scaled struct {
	ns, name string
	load     *framework.Load
}

// newScaled creates a namespace with a Deployment of replicas real pods, a
// load of total spread over them, and a PodAutoscaler (1–8 replicas,
// averageValue 100, a scale-down stabilization window of window), and waits
// until the PodAutoscaler holds the Deployment at want replicas.
func newScaled(ctx context.Context, t *testing.T, replicas int32, total float64, window time.Duration, want int32) *scaled {
	t.Helper()
	ensurePodpilot(ctx, t)
	ns := cluster.CreateNamespace(ctx, t, "day2")
	s := &scaled{ns: ns, name: "web"}
	d := cluster.Deployment(s.name, replicas)
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Close() })
	if err := exp.RegisterTarget(cluster.TargetsDir, "node-"+ns); err != nil {
		t.Fatal(err)
	}
	s.load = cluster.NewLoad(ctx, exp, ns, s.name, loadMetric, false)
	t.Cleanup(s.load.Stop)
	s.load.Set(total)
	cluster.Apply(ctx, t, ns, framework.PodAutoscalerYAML(s.name, "deployment", s.name, 1, 8, fmt.Sprintf(`  customMetrics:
  - metricName: %s
    averageValue: "100"
  behavior:
    scaleDown:
      stabilizationWindowSeconds: %d
`, loadMetric, int(window.Seconds()))))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, s.name, want)
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("%d pods Running and Ready", want), func(ctx context.Context) (bool, string, error) {
		pods, err := cluster.RunningPods(ctx, ns, s.name)
		return int32(len(pods)) == want, fmt.Sprintf("%d ready", len(pods)), err
	})
	return s
}

// podAutoscaler returns the workload's PodAutoscaler.
func (s *scaled) podAutoscaler(ctx context.Context) (*podpilotv1alpha1.PodAutoscaler, error) {
	c, err := versioned.NewForConfig(cluster.Config)
	if err != nil {
		return nil, fmt.Errorf("podpilot clientset: %w", err)
	}
	pa, err := c.AutoscalingV1alpha1().PodAutoscalers(s.ns).Get(ctx, s.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get PodAutoscaler %s/%s: %w", s.ns, s.name, err)
	}
	return pa, nil
}

// replicaChange is a change of the Deployment's spec.replicas, and when it
// was seen.
type replicaChange struct {
	at       time.Time
	replicas int32
}

// replicaRecorder polls the Deployment's spec.replicas every 200ms and
// records each change, until stopped.
type replicaRecorder struct {
	mu      sync.Mutex
	changes []replicaChange
	errs    int
	stop    context.CancelFunc
	done    chan struct{}
}

func (s *scaled) record(ctx context.Context) *replicaRecorder {
	ctx, cancel := context.WithCancel(ctx)
	r := &replicaRecorder{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			n, err := cluster.Replicas(ctx, "Deployment", s.ns, s.name)
			r.mu.Lock()
			switch {
			case err != nil:
				r.errs++
			case len(r.changes) == 0 || r.changes[len(r.changes)-1].replicas != n:
				r.changes = append(r.changes, replicaChange{at: time.Now(), replicas: n})
			}
			r.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

// Stop ends the recording and returns the changes, the first being the
// count when recording began.
func (r *replicaRecorder) Stop() []replicaChange {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]replicaChange(nil), r.changes...)
}

func describeChanges(changes []replicaChange, since time.Time) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		parts = append(parts, fmt.Sprintf("%d at %+.1fs", c.replicas, c.at.Sub(since).Seconds()))
	}
	return strings.Join(parts, ", ")
}

// restarts returns the restart count of each podpilot pod's container.
func restarts(ctx context.Context) (map[string]int32, error) {
	pods, err := podpilotPods(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			out[p.Name] += cs.RestartCount
		}
	}
	return out, nil
}
