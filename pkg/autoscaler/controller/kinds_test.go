package controller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// externalFunc is an ExternalSource made of a function.
type externalFunc func(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error)

func (f externalFunc) GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return f(ctx, namespace, metricSelector, info)
}

// externalValues serves the given series values for any external metric.
func externalValues(values ...string) externalFunc {
	return func(context.Context, string, labels.Selector, provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
		list := &external_metrics.ExternalMetricValueList{}
		for _, v := range values {
			list.Items = append(list.Items, external_metrics.ExternalMetricValue{MetricName: "queue_length", Timestamp: metav1.NewTime(now), Value: resource.MustParse(v)})
		}
		return list, nil
	}
}

// podsAndServices serves qps per pod for pods and 25 for Service web (and 99 for Service other).
func podsAndServices(pods ...string) customFunc {
	perPod := qpsPerPod("1500", pods...)
	return func(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
		if info.GroupResource.Resource != "service" {
			return perPod(ctx, namespace, selector, info, metricSelector)
		}
		list := &custom_metrics.MetricValueList{}
		for name, v := range map[string]string{"web": "25", "other": "99"} {
			list.Items = append(list.Items, custom_metrics.MetricValue{
				DescribedObject: custom_metrics.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: ns, Name: name},
				Timestamp:       metav1.NewTime(now), Value: resource.MustParse(v),
			})
		}
		return list, nil
	}
}

// everyKind adds an Object, an External and a ContainerResource metric to the seed autoscaler.
func everyKind(pa *podpilotv1alpha1.PodAutoscaler) {
	pa.Spec.ObjectMetrics = []podpilotv1alpha1.ObjectMetricSpec{{
		DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
		MetricName:      "requests", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("10")),
	}}
	pa.Spec.ExternalMetrics = []podpilotv1alpha1.ExternalMetricSpec{{
		MetricName: "queue_length", TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse("1")),
	}}
	pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{{
		ResourceName: corev1.ResourceCPU, Container: "vanguard", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50),
	}}
}

func TestEveryKindShowsInTargetsAndCurrentMetricsAndTheLargestProposalWins(t *testing.T) {
	pods := podNames(2)
	f := newFixture(t, podsAndServices(pods...), usagePerPod("150m", "120Mi", pods...),
		append(seedPods(2), seedDeployment(2), seedAutoscaler(everyKind))...)
	f.external = externalValues("3", "1")
	f.restart()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	// qps 1500/2000 → 2; Service web 25 against a Value of 10 on 2 ready pods → 5; queue 3+1 = 4
	// against 1 per pod → 4; container cpu 150m of 500m = 30% against 50% → 2. The object's 5 wins
	// and the legacy scale-up limit max(2 × 2, 4) holds it at 4.
	got, _ := outcomeOf(f, "")
	want := outcome{Replicas: 4, Current: 2, Desired: 4, Targets: "1500/2k, 25/10, 2/1 (avg), 30%/50%",
		Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "True ScaleUpLimit"},
		Events:     []string{"Normal SuccessfulRescale"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	wantMetrics := []podpilotv1alpha1.MetricStatus{
		{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", AverageValue: ptr.To(resource.MustParse("1500"))},
		{Type: podpilotv1alpha1.ObjectMetricSourceType, Name: "requests", DescribedObject: "Service/web", Value: ptr.To(resource.MustParse("25"))},
		{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: "queue_length", Value: ptr.To(resource.MustParse("4")), AverageValue: ptr.To(resource.MustParse("2"))},
		{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "vanguard",
			AverageValue: ptr.To(resource.MustParse("150m")), AverageUtilization: ptr.To[int32](30)},
	}
	if diff := cmp.Diff(wantMetrics, f.autoscaler().Status.CurrentMetrics, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("currentMetrics (-want +got):\n%s", diff)
	}
}

func TestNewKindFailuresAreTheirOwnScalingActiveReasons(t *testing.T) {
	tests := []struct {
		name        string
		mutate      func(*podpilotv1alpha1.PodAutoscaler)
		external    externalFunc
		wantReason  string
		wantTargets string
	}{{
		name: "a container absent from the pods' metrics is FailedGetContainerResourceMetric",
		mutate: func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.CustomMetrics = nil
			pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{{
				ResourceName: corev1.ResourceCPU, Container: "sidecar", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50),
			}}
		},
		wantReason: "False FailedGetContainerResourceMetric", wantTargets: "<unknown>/50%",
	}, {
		name: "an external metric without series is FailedGetExternalMetric",
		mutate: func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.CustomMetrics = nil
			pa.Spec.ExternalMetrics = []podpilotv1alpha1.ExternalMetricSpec{{
				MetricName: "queue_length", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("10")),
			}}
		},
		external:   externalValues(),
		wantReason: "False FailedGetExternalMetric", wantTargets: "<unknown>/10",
	}, {
		name: "an object without a value is FailedGetObjectMetric",
		mutate: func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.CustomMetrics = nil
			pa.Spec.ObjectMetrics = []podpilotv1alpha1.ObjectMetricSpec{{
				DescribedObject: podpilotv1alpha1.MetricObjectReference{Kind: "Service", Name: "gone"},
				MetricName:      "requests", TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse("10")),
			}}
		},
		wantReason: "False FailedGetObjectMetric", wantTargets: "<unknown>/10 (avg)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pods := podNames(2)
			f := newFixture(t, podsAndServices(pods...), usagePerPod("150m", "120Mi", pods...),
				append(seedPods(2), seedDeployment(2), seedAutoscaler(tc.mutate))...)
			f.external = tc.external
			f.restart()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			pa := f.autoscaler()
			if got := condition(pa, podpilotv1alpha1.ConditionScalingActive); got != tc.wantReason {
				t.Errorf("ScalingActive = %q, want %q", got, tc.wantReason)
			}
			if pa.Status.Targets != tc.wantTargets {
				t.Errorf("targets = %q, want %q", pa.Status.Targets, tc.wantTargets)
			}
			if f.replicas("") != 2 {
				t.Errorf("replicas = %d, want 2", f.replicas(""))
			}
		})
	}
}

func TestContainerRequestsAreEachContainersOwnIncludingNativeSidecars(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "migrate", Resources: req("2")},                          // runs to completion: not matched
			{Name: "proxy", RestartPolicy: &always, Resources: req("300m")}, // a native sidecar: matched
			{Name: "log-shipper", RestartPolicy: &always},                   // no request
		},
		Containers: []corev1.Container{{Name: "app", Resources: req("100m")}},
	}}
	want := map[string]map[corev1.ResourceName]int64{
		"app":         {corev1.ResourceCPU: 100},
		"proxy":       {corev1.ResourceCPU: 300},
		"log-shipper": {},
	}
	got, errs := containerRequestsOf(pod)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("container requests (-want +got):\n%s", diff)
	}
	if errs != nil {
		t.Errorf("errors = %v, want none", errs)
	}
}
