package controller

import (
	"strconv"
	"strings"
	"testing"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
)

func TestTheModelCachesSizeIsExportedInPodpilotsMetrics(t *testing.T) {
	f, reg := metricsFixture(t, qpsPerPod("1000", podNames(1)...), false,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), predicting(podpilotv1alpha1.PredictionScaleOut)))...)
	models, err := prediction.NewModels(&fakeHistory{Load: eveningRush}, f.clock, DefaultPredictionRefresh, 10, f.ctrl.metrics.ModelCache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := models.Start(t.Context(), seedQPSPlan()).Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := series(t, reg, "podpilot_autoscaler_prediction_models", "podpilot_autoscaler_prediction_model_bytes")
	if len(got) != 2 || got[1] != "podpilot_autoscaler_prediction_models{} 1" {
		t.Fatalf("series = %q, want one model and its bytes", got)
	}
	if b, err := strconv.ParseFloat(strings.Fields(got[0])[1], 64); err != nil || b < 3*24*60*4 {
		t.Errorf("model bytes = %s, want at least the three days of float32 history it holds", got[0])
	}
}
