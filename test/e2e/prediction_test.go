package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// predictionDoc is a PodAutoscaler on zdns_vanguard_qps with extra spec lines (indented two spaces).
func predictionDoc(name, extra string) string {
	return `apiVersion: autoscaling.podpilot.io/v1alpha1
kind: PodAutoscaler
metadata: {name: ` + name + `}
spec:
  scaleTargetKind: deployment
  scaleTargetName: x
  maxReplicas: 20
  customMetrics: [{metricName: zdns_vanguard_qps, averageValue: "2k"}]
` + extra
}

// TestPredictionAndSchedulesAdmission: spec.prediction and spec.schedules are checked by the CRD's
// schema and CEL rules at admission, naming the field; a full spec with both is accepted.
func TestPredictionAndSchedulesAdmission(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-predict")
	window := func(fields string) string {
		return "  schedules:\n  - {name: business, minReplicas: 4, " + fields + "}\n"
	}
	expectRejected(ctx, t, ns, []rejection{
		{"an unknown prediction mode", predictionDoc("a", "  prediction: {mode: Always}\n"), "spec.prediction.mode"},
		{"a lead time under 15 s", predictionDoc("b", "  prediction: {mode: ScaleOut, leadTimeSeconds: 5}\n"), "spec.prediction.leadTimeSeconds"},
		{"one day of history", predictionDoc("c", "  prediction: {mode: ScaleOut, historyDays: 1}\n"), "spec.prediction.historyDays"},
		{"a start with four fields", predictionDoc("d", window(`start: "0 8 * *", duration: 9h`)), "spec.schedules[0].start"},
		{"a time zone as a TZ= prefix", predictionDoc("e", window(`start: "TZ=UTC 0 8 * * *", duration: 9h`)), "spec.schedules[0].start"},
		{"@every", predictionDoc("f", window(`start: "@every 1h", duration: 9h`)), "spec.schedules[0].start"},
		{"a duration that does not parse", predictionDoc("g", window(`start: "0 8 * * *", duration: nine-hours`)), "spec.schedules[0]"},
		{"a duration over a week", predictionDoc("h", window(`start: "0 8 * * *", duration: 200h`)), "spec.schedules[0].duration"},
		{"a floor of 0", predictionDoc("i", "  schedules:\n  - {name: business, minReplicas: 0, start: \"0 8 * * *\", duration: 9h}\n"), "spec.schedules[0].minReplicas"},
		{"two windows with the same name", predictionDoc("j", "  schedules:\n"+
			"  - {name: business, minReplicas: 4, start: \"0 8 * * *\", duration: 9h}\n"+
			"  - {name: business, minReplicas: 6, start: \"0 9 * * *\", duration: 1h}\n"), "spec.schedules: duplicate entries"},
	})
	t.Run("a spec with prediction and schedules is accepted, with mode Off by default", func(t *testing.T) {
		doc := predictionDoc("full", "  prediction: {historyDays: 28, leadTimeSeconds: 180}\n"+
			"  schedules:\n  - {name: business-hours, start: \"0 8 * * 1-5\", timeZone: Europe/Berlin, duration: 10h, minReplicas: 6}\n"+
			"  - {name: newsletter, start: \"@weekly\", duration: 2h, minReplicas: 12}\n")
		if _, err := cluster.ApplyErr(ctx, ns, []byte(doc), false); err != nil {
			t.Fatalf("rejected: %v", err)
		}
		pa, err := getPodAutoscaler(ctx, t, ns, "full")
		if err != nil {
			t.Fatal(err)
		}
		if pa.Spec.Prediction == nil || pa.Spec.Prediction.Mode != "Off" {
			t.Errorf("spec.prediction = %+v, want mode defaulted to Off", pa.Spec.Prediction)
		}
	})
	t.Run("the seed's example is still accepted unchanged", func(t *testing.T) {
		doc, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "examples", "hpa-vg1-vanguard.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.ApplyErr(ctx, ns, doc, true); err != nil {
			t.Errorf("seed example rejected: %v", err)
		}
	})
}
