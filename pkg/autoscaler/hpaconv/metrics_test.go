package hpaconv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// refusedFields returns the refused fields of err, failing unless err is a *RefusedError.
func refusedFields(t *testing.T, err error) []string {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want a *RefusedError wrapping ErrRefused", err)
	}
	var out []string
	for _, r := range re.Refusals {
		out = append(out, r.Field)
	}
	return out
}

var sel = &metav1.LabelSelector{
	MatchLabels:      map[string]string{"queue": "orders"},
	MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
}

var ppaSel = &podpilotv1alpha1.MetricSelector{
	MatchLabels:      map[string]string{"queue": "orders"},
	MatchExpressions: []podpilotv1alpha1.MetricSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
}

// TestConvertMetricKindsAndTargets: each autoscaling/v2 metric kind with each target type the
// PodAutoscaler's kind takes becomes the same target, selector included.
func TestConvertMetricKindsAndTargets(t *testing.T) {
	svc := podpilotv1alpha1.MetricObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"}
	tests := []struct {
		name   string
		metric autoscalingv2.MetricSpec
		want   podpilotv1alpha1.PodAutoscalerSpec
	}{
		{name: "a Resource Utilization target becomes a resourceMetrics Utilization target", metric: resourceMetric(corev1.ResourceCPU, utilization(60)),
			want: podpilotv1alpha1.PodAutoscalerSpec{ResourceMetrics: []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: corev1.ResourceCPU,
				TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr(int32(60))}}}},
		{name: "a Resource AverageValue target becomes a resourceMetrics AverageValue target", metric: resourceMetric(corev1.ResourceMemory, averageValue("256Mi")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ResourceMetrics: []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: corev1.ResourceMemory,
				TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: qty("256Mi")}}}},
		{name: "a ContainerResource Utilization target keeps its container", metric: containerMetric(corev1.ResourceCPU, "app", utilization(70)),
			want: podpilotv1alpha1.PodAutoscalerSpec{ContainerResourceMetrics: []podpilotv1alpha1.ContainerResourceMetricSpec{{ResourceName: corev1.ResourceCPU,
				Container: "app", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr(int32(70))}}}},
		{name: "a ContainerResource AverageValue target keeps its container", metric: containerMetric(corev1.ResourceMemory, "app", averageValue("100Mi")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ContainerResourceMetrics: []podpilotv1alpha1.ContainerResourceMetricSpec{{ResourceName: corev1.ResourceMemory,
				Container: "app", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: qty("100Mi")}}}},
		{name: "a Pods AverageValue target becomes a customMetrics target with its selector", metric: podsMetric("rps", sel, averageValue("2k")),
			want: podpilotv1alpha1.PodAutoscalerSpec{CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "rps", AverageValue: *qty("2k"), Selector: ppaSel}}}},
		{name: "an Object Value target keeps its described object and selector", metric: objectMetric("rps", sel, value("100")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ObjectMetrics: []podpilotv1alpha1.ObjectMetricSpec{{DescribedObject: svc, MetricName: "rps", Selector: ppaSel,
				TargetType: podpilotv1alpha1.ValueTarget, Value: qty("100")}}}},
		{name: "an Object AverageValue target keeps its described object", metric: objectMetric("rps", nil, averageValue("10")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ObjectMetrics: []podpilotv1alpha1.ObjectMetricSpec{{DescribedObject: svc, MetricName: "rps",
				TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: qty("10")}}}},
		{name: "an External Value target keeps its selector", metric: externalMetric("queue_depth", sel, value("30")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ExternalMetrics: []podpilotv1alpha1.ExternalMetricSpec{{MetricName: "queue_depth", Selector: ppaSel,
				TargetType: podpilotv1alpha1.ValueTarget, Value: qty("30")}}}},
		{name: "an External AverageValue target", metric: externalMetric("queue_depth", nil, averageValue("5")),
			want: podpilotv1alpha1.PodAutoscalerSpec{ExternalMetrics: []podpilotv1alpha1.ExternalMetricSpec{{MetricName: "queue_depth",
				TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: qty("5")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pa, err := Convert(hpa(tc.metric), ptr(UpstreamDefaults()))
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			tc.want.ScaleTargetKind, tc.want.ScaleTargetName = podpilotv1alpha1.ScaleTargetDeployment, "web"
			tc.want.MinReplicas, tc.want.MaxReplicas = ptr(int32(2)), 10
			if diff := cmp.Diff(tc.want, pa.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertRefusesWhatThePodAutoscalerCannotExpress: each such metric is refused naming the
// HPA's field, never approximated.
func TestConvertRefusesWhatThePodAutoscalerCannotExpress(t *testing.T) {
	many := func(n int, m func(i int) autoscalingv2.MetricSpec) []autoscalingv2.MetricSpec {
		var out []autoscalingv2.MetricSpec
		for i := range n {
			out = append(out, m(i))
		}
		return out
	}
	bigSelector := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := range 33 {
		bigSelector.MatchLabels[fmt.Sprintf("l%d", i)] = "v"
	}
	tests := []struct {
		name    string
		metrics []autoscalingv2.MetricSpec
		want    []string
		reason  string
	}{
		{name: "a Pods metric whose target is Utilization is refused (customMetrics take AverageValue only)",
			metrics: []autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, utilization(50)), resourceMetric(corev1.ResourceMemory, utilization(50)), podsMetric("rps", nil, utilization(50))},
			want:    []string{"spec.metrics[2].pods.target.type"}, reason: "AverageValue only"},
		{name: "a Pods metric whose target is Value is refused", metrics: []autoscalingv2.MetricSpec{podsMetric("rps", nil, value("1"))},
			want: []string{"spec.metrics[0].pods.target.type"}},
		{name: "a Resource metric whose target is Value is refused", metrics: []autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, value("1"))},
			want: []string{"spec.metrics[0].resource.target.type"}, reason: "Utilization or AverageValue"},
		{name: "a ContainerResource metric whose target is Value is refused", metrics: []autoscalingv2.MetricSpec{containerMetric(corev1.ResourceCPU, "app", value("1"))},
			want: []string{"spec.metrics[0].containerResource.target.type"}},
		{name: "an Object metric whose target is Utilization is refused", metrics: []autoscalingv2.MetricSpec{objectMetric("rps", nil, utilization(50))},
			want: []string{"spec.metrics[0].object.target.type"}, reason: "Value or AverageValue"},
		{name: "an External metric whose target is Utilization is refused", metrics: []autoscalingv2.MetricSpec{externalMetric("q", nil, utilization(50))},
			want: []string{"spec.metrics[0].external.target.type"}},
		{name: "a resource other than cpu or memory is refused", metrics: []autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceEphemeralStorage, averageValue("1Gi"))},
			want: []string{"spec.metrics[0].resource.name"}, reason: "cpu or memory only"},
		{name: "a target whose fields disagree with its type is refused naming the extra field",
			metrics: []autoscalingv2.MetricSpec{externalMetric("q", nil, autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: qty("1"), AverageValue: qty("1")})},
			want:    []string{"spec.metrics[0].external.target.averageValue"}, reason: "must not be set"},
		{name: "a target without its type's field is refused", metrics: []autoscalingv2.MetricSpec{externalMetric("q", nil, autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType})},
			want: []string{"spec.metrics[0].external.target.value"}, reason: "is required"},
		{name: "a zero target value is refused", metrics: []autoscalingv2.MetricSpec{objectMetric("rps", nil, value("0"))},
			want: []string{"spec.metrics[0].object.target.value"}, reason: "positive"},
		{name: "a source under another type's field is refused",
			metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: utilization(1)}}},
			want:    []string{"spec.metrics[0].resource", "spec.metrics[0].pods"}},
		{name: "an unknown metric type is refused", metrics: []autoscalingv2.MetricSpec{{Type: "Foo"}}, want: []string{"spec.metrics[0].type"}},
		{name: "the same resource twice is refused on the second",
			metrics: []autoscalingv2.MetricSpec{resourceMetric(corev1.ResourceCPU, utilization(50)), resourceMetric(corev1.ResourceCPU, averageValue("1"))},
			want:    []string{"spec.metrics[1].resource.name"}},
		{name: "the same Pods metric name twice, even with other selectors, is refused",
			metrics: []autoscalingv2.MetricSpec{podsMetric("rps", nil, averageValue("1")), podsMetric("rps", sel, averageValue("2"))},
			want:    []string{"spec.metrics[1].pods.metric.name"}, reason: "one Pods metric per metric name"},
		{name: "the same container and resource twice is refused",
			metrics: []autoscalingv2.MetricSpec{containerMetric(corev1.ResourceCPU, "app", utilization(50)), containerMetric(corev1.ResourceCPU, "app", utilization(60))},
			want:    []string{"spec.metrics[1].containerResource.container"}},
		{name: "more than 10 External metrics are refused",
			metrics: many(11, func(i int) autoscalingv2.MetricSpec { return externalMetric(fmt.Sprint("q", i), nil, value("1")) }),
			want:    []string{"spec.metrics"}, reason: "at most 10"},
		{name: "a selector beyond the PodAutoscaler's bounds is refused", metrics: []autoscalingv2.MetricSpec{externalMetric("q", bigSelector, value("1"))},
			want: []string{"spec.metrics[0].external.metric.selector.matchLabels"}, reason: "at most 32"},
		{name: "a selector with an unknown operator is refused",
			metrics: []autoscalingv2.MetricSpec{podsMetric("rps", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Gt"}}}, averageValue("1"))},
			want:    []string{"spec.metrics[0].pods.metric.selector.matchExpressions[0].operator"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pa, err := Convert(hpa(tc.metrics...), ptr(UpstreamDefaults()))
			if pa != nil {
				t.Errorf("Convert returned a PodAutoscaler with a refusal: %+v", pa.Spec)
			}
			if diff := cmp.Diff(tc.want, refusedFields(t, err)); diff != "" {
				t.Errorf("refused fields (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.HasPrefix(err.Error(), "HorizontalPodAutoscaler shop/web: ") {
				t.Errorf("error %q does not name the HPA or say %q", err, tc.reason)
			}
		})
	}
}
