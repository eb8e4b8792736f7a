package controller

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
)

// resourceHistories serves resource histories only, one load function per resource and
// container ("cpu", "memory/vanguard"); a custom or external read fails. It records the requests.
type resourceHistories struct {
	mu    sync.Mutex
	loads map[string]func(time.Time) float64
	err   error
	reqs  []metrics.HistoryRequest
}

var errNotAResourceRead = errors.New("a resource metric's history was read as a custom or external metric's")

func (h *resourceHistories) ObjectsHistory(context.Context, metrics.HistoryRequest) ([]float64, error) {
	return nil, errNotAResourceRead
}

func (h *resourceHistories) ExternalHistory(context.Context, metrics.HistoryRequest) ([]float64, error) {
	return nil, errNotAResourceRead
}

func (h *resourceHistories) ResourceHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = append(h.reqs, req)
	if h.err != nil {
		return nil, h.err
	}
	key := req.Metric
	if req.Container != "" {
		key += "/" + req.Container
	}
	load, ok := h.loads[key]
	if !ok {
		return nil, errors.New("no history of " + key)
	}
	fh := fakeHistory{Load: load}
	return fh.Read(req)
}

// cpuAndContainerMemory replaces the seed's qps metric by cpu at 50% of its 500m request (250m a
// pod) and container vanguard's memory at 256Mi a pod.
func cpuAndContainerMemory(pa *podpilotv1alpha1.PodAutoscaler) {
	pa.Spec.CustomMetrics = nil
	pa.Spec.ResourceMetrics = []podpilotv1alpha1.ResourceMetricSpec{{
		ResourceName: corev1.ResourceCPU, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}
	pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{{
		ResourceName: corev1.ResourceMemory, Container: "vanguard", TargetType: podpilotv1alpha1.AverageValueMetricType,
		AverageValue: ptr.To(resource.MustParse("256Mi"))}}
}

// newResourcePredictionFixture is the seed's one pod using 250m cpu and 256Mi memory (one
// replica's worth of both), with cpuAndContainerMemory's metrics and history from h.
func newResourcePredictionFixture(t *testing.T, h metrics.HistorySource, mode podpilotv1alpha1.PredictionMode) *fixture {
	t.Helper()
	f := newFixture(t, nil, usagePerPod("250m", "256Mi", podNames(1)...),
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), cpuAndContainerMemory, predicting(mode)))...)
	f.history = h
	f.restart()
	return f
}

const mebibyte = 1 << 20

func TestResourceAndContainerResourceMetricsAreForecastFromTheirResourceHistory(t *testing.T) {
	// The evening rush in the metrics' units: cpu in cores (1000 qps ↔ 0.25 cores, one pod's
	// worth at 50% of 500m), memory in bytes (1000 qps ↔ 256Mi).
	h := &resourceHistories{loads: map[string]func(time.Time) float64{
		"cpu":             func(t time.Time) float64 { return eveningRush(t) / 4000 },
		"memory/vanguard": func(t time.Time) float64 { return eveningRush(t) / 1000 * 256 * mebibyte },
	}}
	f := newResourcePredictionFixture(t, h, podpilotv1alpha1.PredictionScaleOut)
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionPredictionActive); got != "True ForecastRaised" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(pa))
	}
	if got := f.replicas("deployment"); got != 4 {
		t.Errorf("replicas = %d, want 4: each forecast asks for 9 pods in 10m, limited to 4 from 1 by the scale-up limit", got)
	}
	p := pa.Status.Prediction
	if p == nil || len(p.Metrics) != 2 || p.Replicas < 5 {
		t.Fatalf("status.prediction = %+v, want a forecast for both metrics asking for at least maxReplicas", p)
	}
	want := []struct {
		typ       podpilotv1alpha1.MetricSourceType
		name      string
		container string
		from, to  float64
	}{
		{podpilotv1alpha1.ResourceMetricSourceType, "cpu", "", 2, 2.9},
		{podpilotv1alpha1.ContainerResourceMetricSourceType, "memory", "vanguard", 8 * 256 * mebibyte, 11.5 * 256 * mebibyte},
	}
	for i, w := range want {
		m := p.Metrics[i]
		if m.Type != w.typ || m.Name != w.name || m.Container != w.container || m.Value == nil {
			t.Fatalf("status.prediction.metrics[%d] = %+v, want %s %s (container %q) with a value", i, m, w.typ, w.name, w.container)
		}
		if m.Replicas < 9 || m.Replicas > 12 {
			t.Errorf("%s forecast asks for %d replicas, want 9 (and its headroom's)", w.name, m.Replicas)
		}
		if v := m.Value.AsApproximateFloat64(); v < w.from || v > w.to {
			t.Errorf("%s forecast = %g, want %g to %g: the rush's 9 pods' worth, in the current reading's units, and its headroom", w.name, v, w.from, w.to)
		}
	}
	pods := "vg1-vanguard-[a-z0-9]+-[a-z0-9]+"
	gr := schema.GroupResource{Resource: "pods"}
	var got []metrics.HistoryRequest
	for _, r := range h.reqs {
		got = append(got, metrics.HistoryRequest{Namespace: r.Namespace, Metric: r.Metric, Resource: r.Resource, Names: r.Names, Container: r.Container})
	}
	wantReqs := []metrics.HistoryRequest{
		{Namespace: ns, Metric: "cpu", Resource: gr, Names: pods},
		{Namespace: ns, Metric: "memory", Resource: gr, Names: pods, Container: "vanguard"},
	}
	// The fits start in the background, one per metric, in no set order.
	slices.SortFunc(got, func(a, b metrics.HistoryRequest) int { return strings.Compare(a.Metric, b.Metric) })
	if diff := cmp.Diff(wantReqs, got); diff != "" {
		t.Errorf("history requests (-want +got):\n%s", diff)
	}
}

func TestWithoutResourceRulesAResourceMetricsForecastIsOffAndSaysWhy(t *testing.T) {
	// The provider's ErrNoResourceRules, as it reaches the controller.
	noRules := errors.New(`history of resource cpu for pods matching "vg1-vanguard-[a-z0-9]+-[a-z0-9]+" in namespace "dns": ` +
		"the history of resource metrics (cpu, memory) needs podpilot's resourceRules, the rules that serve metrics.k8s.io, and the rule file in force has none")
	f := newResourcePredictionFixture(t, &resourceHistories{err: noRules}, podpilotv1alpha1.PredictionScaleOut)
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
	if c == nil || c.Status != "False" || c.Reason != prediction.ReasonHistoryUnavailable || !strings.Contains(c.Message, "needs podpilot's resourceRules") {
		t.Errorf("PredictionActive = %+v, want False HistoryUnavailable saying resourceRules are needed", c)
	}
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas = %d, want the metrics' 1: no forecast is guessed", got)
	}
}
