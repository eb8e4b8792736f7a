package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

func TestVisiblyChanged(t *testing.T) {
	base := func() podpilotv1alpha1.PodAutoscalerStatus {
		return podpilotv1alpha1.PodAutoscalerStatus{
			ObservedGeneration: 1, Reference: "Deployment/vg1-vanguard", Targets: "2k/2k, 40%/50%, 100/200",
			CurrentReplicas: 2, DesiredReplicas: 2,
			CurrentMetrics: []podpilotv1alpha1.MetricStatus{
				{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", AverageValue: ptr.To(resource.MustParse("2000"))},
				{Type: podpilotv1alpha1.ResourceMetricSourceType, Name: "cpu", AverageValue: ptr.To(resource.MustParse("200m")), AverageUtilization: ptr.To[int32](40)},
				{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: "queue_length", Value: ptr.To(resource.MustParse("100"))},
			},
			Conditions:      []metav1.Condition{{Type: "ScalingActive", Status: metav1.ConditionTrue, Reason: "ValidMetricFound", Message: "m"}},
			Recommendations: []podpilotv1alpha1.Recommendation{{Replicas: 2, Timestamp: metav1.NewTime(now)}},
		}
	}
	tests := []struct {
		name   string
		change func(*podpilotv1alpha1.PodAutoscalerStatus)
		want   bool
	}{
		{"nothing changed", func(*podpilotv1alpha1.PodAutoscalerStatus) {}, false},
		{"a metric value within 5% with the targets it renders is not visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[0].AverageValue = ptr.To(resource.MustParse("2090"))
			s.Targets = "2090/2k, 40%/50%, 100/200"
		}, false},
		{"a utilization within 5% is not visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[1].AverageUtilization = ptr.To[int32](41)
		}, false},
		{"a metric value more than 5% away is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[0].AverageValue = ptr.To(resource.MustParse("2101"))
		}, true},
		{"an External value within 5% is not visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[2].Value = ptr.To(resource.MustParse("104"))
			s.Targets = "2k/2k, 40%/50%, 104/200"
		}, false},
		{"an External value more than 5% away is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[2].Value = ptr.To(resource.MustParse("106"))
		}, true},
		{"an External metric's first failure time is visible, with its value close", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[2].FirstFailureTime = &metav1.Time{Time: now}
		}, true},
		{"an External metric's fallback status is visible, with its value close", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[2].FallbackStatus = podpilotv1alpha1.FallbackActive
		}, true},
		{"a metric that failed is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.CurrentMetrics[0].AverageValue = nil
		}, true},
		{"a condition's reason is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) { s.Conditions[0].Reason = "FailedGetPodsMetric" }, true},
		{"a condition's message is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) { s.Conditions[0].Message = "other" }, true},
		{"replicas are visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) { s.DesiredReplicas = 3 }, true},
		{"the history is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.Recommendations = append(s.Recommendations, podpilotv1alpha1.Recommendation{Replicas: 3, Timestamp: metav1.NewTime(now.Add(time.Minute))})
		}, true},
		{"lastScaleTime is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) { s.LastScaleTime = ptr.To(metav1.NewTime(now)) }, true},
		{"a new generation is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) { s.ObservedGeneration = 2 }, true},
		{"targets alone changed, e.g. by a new target value, is visible", func(s *podpilotv1alpha1.PodAutoscalerStatus) {
			s.Targets = "2k/3k, 40%/50%, 100/200"
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.change(&s)
			if got := VisiblyChanged(base(), s); got != tc.want {
				t.Errorf("VisiblyChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// Each condition carries the generation it was computed for (metav1.Condition's observedGeneration), also when
// only its reason changes: kube-controller-manager 1.37.2 leaves the HPA conditions' field empty (docs/how-it-decides.md).
func TestSetConditionRecordsTheGeneration(t *testing.T) {
	pa := &podpilotv1alpha1.PodAutoscaler{}
	pa.Generation = 1
	now := time.Unix(0, 0)
	SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededGetScale, "m", now)
	pa.Generation = 2
	SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededRescale, "m", now.Add(time.Second))
	c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionAbleToScale)
	if c == nil || c.ObservedGeneration != 2 {
		t.Fatalf("condition %+v, want observedGeneration 2", c)
	}
}
