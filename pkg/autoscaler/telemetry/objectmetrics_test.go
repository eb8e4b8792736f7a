package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

func TestPerObjectSeriesCoverEveryKind(t *testing.T) {
	pa := seedAutoscaler(everyKind)
	pa.Status.CurrentMetrics = []podpilotv1alpha1.MetricStatus{
		{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", AverageValue: ptr.To(resource.MustParse("1500"))},
		{Type: podpilotv1alpha1.ObjectMetricSourceType, Name: "requests", DescribedObject: "Service/web", Value: ptr.To(resource.MustParse("25"))},
		{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: "queue_length", Value: ptr.To(resource.MustParse("4")), AverageValue: ptr.To(resource.MustParse("2"))},
		{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "vanguard", AverageValue: ptr.To(resource.MustParse("150m")), AverageUtilization: ptr.To[int32](30)},
	}
	type row struct {
		Type          podpilotv1alpha1.MetricSourceType
		Name          string
		TargetType    podpilotv1alpha1.MetricTargetType
		Target, Value float64
	}
	var got []row
	for _, m := range metricsOfObject(pa) {
		if !m.hasValue {
			t.Errorf("%s %s has no value", m.typ, m.name)
		}
		got = append(got, row{m.typ, m.name, m.targetType, m.target, m.value})
	}
	want := []row{
		{podpilotv1alpha1.CustomMetricSourceType, "zdns_vanguard_qps", "AverageValue", 2000, 1500},
		{podpilotv1alpha1.ObjectMetricSourceType, "requests", "Value", 10, 25},
		{podpilotv1alpha1.ExternalMetricSourceType, "queue_length", "AverageValue", 1, 2},
		{podpilotv1alpha1.ContainerResourceMetricSourceType, "cpu", "Utilization", 50, 30},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-object metrics (-want +got):\n%s", diff)
	}
}

// TestMetricListsAreJoinedByIdentity checks that status.targets and the per-object series find a
// metric's status by its identity, not by its position: a list shorter than the spec's (a fast
// path, an older status) or in another order shows each value at its own metric.
func TestMetricListsAreJoinedByIdentity(t *testing.T) {
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{
			{ResourceName: corev1.ResourceCPU, Container: "app", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))},
			{ResourceName: corev1.ResourceCPU, Container: "sidecar", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))},
		}
	})
	sidecar := decision.MetricStatus{Kind: decision.ContainerResourceMetric, Name: "cpu",
		Target: replicas.Target{Type: replicas.AverageValue, Resource: corev1.ResourceCPU, Container: "sidecar"}, Result: replicas.Result{AverageValue: 300}}
	if got, want := status.TargetsOf(pa, []decision.MetricStatus{sidecar}), "<unknown>/2k, <unknown>/1, 300m/1"; got != want {
		t.Errorf("status.targets = %q, want %q: only the sidecar's cpu has a status", got, want)
	}
	pa.Status.CurrentMetrics = []podpilotv1alpha1.MetricStatus{
		{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "sidecar", AverageValue: ptr.To(resource.MustParse("300m"))},
	}
	for _, m := range metricsOfObject(pa) {
		if m.hasValue && m.container != "sidecar" {
			t.Errorf("metric %s/%s of container %q shows the sidecar's value %g", m.typ, m.name, m.container, m.value)
		}
	}
}
