package v1alpha1

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPredictionFieldsDecodeAndDeepCopy(t *testing.T) {
	orig, err := strictDecode(t, readFile(t, filepath.Join("testdata", "prediction.yaml")))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got := orig.Spec.Schedules[0].Duration.Duration; got != 10*time.Hour {
		t.Errorf("schedules[0].duration = %s, want 10h", got)
	}
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp, quantityEqual); diff != "" {
		t.Fatalf("deep copy (-orig +copy):\n%s", diff)
	}
	*cp.Spec.Prediction.HistoryDays, *cp.Spec.Prediction.LeadTimeSeconds = 3, 30
	cp.Spec.Schedules[0].MinReplicas = 1
	cp.Status.Prediction.FittedTime.Time = time.Time{}
	*cp.Status.Prediction.Metrics[0].Value = resource.MustParse("1")
	*cp.Status.Prediction.Metrics[0].WAPEPercent = 99
	cp.Status.Schedules.Active[0].Name = "changed"
	cp.Status.Schedules.Next.MinReplicas = 1
	cp.Status.LastDecision.Proposals[0].Replicas = 1
	cp.Status.LastDecision.Changes[0] = "changed"
	again, err := strictDecode(t, readFile(t, filepath.Join("testdata", "prediction.yaml")))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if diff := cmp.Diff(again, orig, quantityEqual); diff != "" {
		t.Errorf("mutating the copy changed the original (-want +got):\n%s", diff)
	}
}

// The schedule bounds are written twice, as a constant and as maxItems markers; this keeps them in step.
func TestCRDScheduleBoundsMatchConstants(t *testing.T) {
	schema := crdVersionSchema(t)
	for _, path := range [][]string{{"spec", "schedules"}, {"status", "schedules", "active"}} {
		if diff := cmp.Diff(float64(MaxScheduleWindows), at(t, schema, path...)["maxItems"]); diff != "" {
			t.Errorf("maxItems of %v (-want +got):\n%s", path, diff)
		}
	}
	if diff := cmp.Diff("Off", at(t, schema, "spec", "prediction", "mode")["default"]); diff != "" {
		t.Errorf("default of spec.prediction.mode (-want +got):\n%s", diff)
	}
}
