package status

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// TestReportFallbacks checks the ExternalMetricFallbackActive condition and the events of a
// fallback's start and end.
func TestReportFallbacks(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	queue := decision.MetricID{Kind: decision.ExternalMetric, Name: "queue_depth"}
	fb := decision.Fallback{Replicas: 10, After: 3 * time.Minute}
	tests := []struct {
		name       string
		states     []decision.FallbackState
		was        bool
		want       string // condition "Status Reason", or <none>
		wantEvents []string
	}{
		{"without any fallback the condition is absent", nil, false, "<none>", nil},
		{"a metric read is MetricsAvailable", []decision.FallbackState{{ID: queue, Fallback: fb}}, false, "False MetricsAvailable", nil},
		{"a metric failing not yet long enough is FallbackPending", []decision.FallbackState{{ID: queue, Fallback: fb, FailingSince: now.Add(-time.Minute)}},
			false, "False FallbackPending", nil},
		{"a fallback that begins is True and announced once, with KEP-5679's text",
			[]decision.FallbackState{{ID: queue, Fallback: fb, FailingSince: now.Add(-3 * time.Minute), Active: true}}, false, "True FallbackActive",
			[]string{"Normal ExternalMetricFallbackActivated Fallback activated for external metric 'queue_depth' after 3m0s of consecutive failures, using fallback replica count: 10"}},
		{"a fallback that goes on is not announced again",
			[]decision.FallbackState{{ID: queue, Fallback: fb, FailingSince: now.Add(-time.Hour), Active: true}}, true, "True FallbackActive", nil},
		{"a metric read again ends the fallback and says so", []decision.FallbackState{{ID: queue, Fallback: fb}}, true, "False MetricsAvailable",
			[]string{"Normal ExternalMetricFallbackDeactivated Fallback deactivated for external metric 'queue_depth': the metric was read again"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			pa := &podpilotv1alpha1.PodAutoscaler{}
			meta.SetStatusCondition(&pa.Status.Conditions, metav1.Condition{Type: podpilotv1alpha1.ConditionExternalMetricFallbackActive, Status: metav1.ConditionFalse, Reason: "Old"})
			ReportFallbacks(rec, pa, tc.states, func(decision.MetricID) bool { return tc.was }, now)
			got := "<none>"
			if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionExternalMetricFallbackActive); c != nil {
				got = string(c.Status) + " " + c.Reason
			}
			var evs []string
			for len(rec.Events) > 0 {
				evs = append(evs, strings.TrimSpace(<-rec.Events))
			}
			if diff := cmp.Diff(struct {
				Cond   string
				Events []string
			}{tc.want, tc.wantEvents}, struct {
				Cond   string
				Events []string
			}{got, evs}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
