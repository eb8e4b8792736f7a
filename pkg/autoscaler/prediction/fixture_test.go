package prediction

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
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

// fakeHistory, eveningRush and predicting are the tests' shared history fixtures.
type fakeHistory = autoscalertest.History

var (
	eveningRush = autoscalertest.EveningRush
	predicting  = autoscalertest.Predicting
)

// seedQPSPlan is the plan of the seed's zdns_vanguard_qps history over three days.
func seedQPSPlan() Plan {
	key := modelKey{window: 72 * time.Hour}
	key.Namespace, key.Metric, key.Selector = ns, "Pods/zdns_vanguard_qps", "vg1-vanguard-[a-z0-9]+-[a-z0-9]+;"
	return Plan{key: key, req: metrics.HistoryRequest{Namespace: ns, Metric: "zdns_vanguard_qps"}}
}
