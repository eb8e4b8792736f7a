package prediction

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
)

// The controller's tests' seed, as far as the forecast reads it.
const ns = "dns"

var now = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

// DefaultSyncPeriod is the controller's default sync period.
const DefaultSyncPeriod = 15 * time.Second

// seedAutoscaler is the seed 000 example (as the controller's tests have it): deployment
// vg1-vanguard, 1 to 5 replicas, qps averageValue 2000; mutate adapts it per case.
func seedAutoscaler(mutate ...func(*podpilotv1alpha1.PodAutoscaler)) *podpilotv1alpha1.PodAutoscaler {
	pa := &podpilotv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa-vg1-vanguard", Namespace: ns, Generation: 1},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
			MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
			CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")}},
		},
	}
	for _, m := range mutate {
		m(pa)
	}
	return pa
}

// modelsFixture is the models the controller's fixture builds with history h: at the default
// refresh and bound, on a fake clock at now.
type modelsFixture struct {
	clock  *clocktesting.FakeClock
	models *Models
}

func newModelsFixture(t *testing.T, h *fakeHistory) *modelsFixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(now)
	m, err := NewModels(h, clk, DefaultRefresh, DefaultMaxModels, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &modelsFixture{clock: clk, models: m}
}

// fakeHistory serves a history from a load function of time; err fails every read. It records
// the requests.
type fakeHistory struct {
	mu   sync.Mutex
	load func(time.Time) float64
	err  error
	reqs []metrics.HistoryRequest
	// gate, when set, holds every read until it is closed.
	gate chan struct{}
}

func (h *fakeHistory) read(req metrics.HistoryRequest) ([]float64, error) {
	h.mu.Lock()
	h.reqs = append(h.reqs, req)
	gate := h.gate
	h.mu.Unlock()
	if gate != nil {
		<-gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	var out []float64
	for t := req.Start; !t.After(req.End); t = t.Add(req.Step) {
		out = append(out, h.load(t.Add(-req.Step/2))) // the value at t is the load around t - step/2
	}
	return out, nil
}

func (h *fakeHistory) ObjectsHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.read(req)
}

func (h *fakeHistory) ExternalHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.read(req)
}

func (h *fakeHistory) requests() []metrics.HistoryRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]metrics.HistoryRequest(nil), h.reqs...)
}

// eveningRush is a daily load in qps over the seed's pods: 1000 until 21:02 UTC (the fixture's
// now is 21:00), rising to 9000 by 21:07 and back to 1000 at 23:00, with a little noise.
func eveningRush(t time.Time) float64 {
	h := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	v := 1000.0
	switch {
	case h >= 21+2.0/60 && h < 21+7.0/60:
		v += 8000 * (h - 21 - 2.0/60) / (5.0 / 60)
	case h >= 21+7.0/60 && h < 23:
		v = 9000
	}
	return v * (1 + 0.01*math.Sin(float64(t.Unix()/60)*1.7))
}

// predicting sets spec.prediction with a 10-minute lead time: at 21:10 the rush is at 9000.
func predicting(mode podpilotv1alpha1.PredictionMode) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.Prediction = &podpilotv1alpha1.PredictionSpec{Mode: mode, HistoryDays: ptr.To[int32](3), LeadTimeSeconds: ptr.To[int32](600)}
	}
}

// seedQPSPlan is the plan of the seed's zdns_vanguard_qps history over three days.
func seedQPSPlan() Plan {
	key := modelKey{window: 72 * time.Hour}
	key.Namespace, key.Metric, key.Selector = ns, "Pods/zdns_vanguard_qps", "vg1-vanguard-[a-z0-9]+-[a-z0-9]+;"
	return Plan{key: key, req: metrics.HistoryRequest{Namespace: ns, Metric: "zdns_vanguard_qps"}}
}

func (h *fakeHistory) ResourceHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.read(req)
}
