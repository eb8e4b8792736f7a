package prediction

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
)

// The controller's tests' seed, as far as the forecast reads it.
const ns = autoscalertest.Namespace

var now = autoscalertest.Now

// DefaultSyncPeriod is the controller's default sync period.
const DefaultSyncPeriod = 15 * time.Second

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
