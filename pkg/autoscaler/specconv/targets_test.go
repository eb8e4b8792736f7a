package specconv

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

func TestResourceTargetIsOKOnlyWithTheValueItsTypeNames(t *testing.T) {
	cases := []struct {
		name   string
		spec   podpilotv1alpha1.ResourceMetricSpec
		want   replicas.Target
		wantOK bool
	}{{
		name:   "a utilization target carries its percentage",
		spec:   podpilotv1alpha1.ResourceMetricSpec{ResourceName: "cpu", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)},
		want:   replicas.Target{Resource: "cpu", Type: replicas.Utilization, Utilization: 60},
		wantOK: true,
	}, {
		name:   "an average value target carries its value in milli-units",
		spec:   podpilotv1alpha1.ResourceMetricSpec{ResourceName: "memory", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("2"))},
		want:   replicas.Target{Resource: "memory", Type: replicas.AverageValue, AverageValue: 2000},
		wantOK: true,
	}, {
		name: "a utilization target without its percentage stays zero, which the calculator rejects",
		spec: podpilotv1alpha1.ResourceMetricSpec{ResourceName: "cpu", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageValue: ptr.To(resource.MustParse("2"))},
		want: replicas.Target{Resource: "cpu", Type: replicas.Utilization},
	}, {
		name: "an unknown target type has no type",
		spec: podpilotv1alpha1.ResourceMetricSpec{ResourceName: "cpu", TargetType: "Value", AverageUtilization: ptr.To[int32](60)},
		want: replicas.Target{Resource: "cpu"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ResourceTarget(tc.spec)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("ResourceTarget ok = %t, want %t; target (-want +got):\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}

func TestContainerResourceTargetNamesItsContainer(t *testing.T) {
	got := ContainerResourceTarget(podpilotv1alpha1.ContainerResourceMetricSpec{
		ResourceName: "cpu", Container: "app", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50),
	})
	want := replicas.Target{Resource: "cpu", Container: "app", Type: replicas.Utilization, Utilization: 50}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ContainerResourceTarget (-want +got):\n%s", diff)
	}
}

func TestValueTargetReadsTheFieldItsTypeNames(t *testing.T) {
	v, avg := ptr.To(resource.MustParse("10")), ptr.To(resource.MustParse("500m"))
	cases := []struct {
		name string
		typ  podpilotv1alpha1.ValueTargetType
		want replicas.Target
	}{
		{name: "a value target reads value", typ: podpilotv1alpha1.ValueTarget, want: replicas.Target{Type: replicas.Value, Value: 10_000}},
		{name: "an average value target reads averageValue", typ: podpilotv1alpha1.AverageValueTarget, want: replicas.Target{Type: replicas.AverageValue, AverageValue: 500}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ValueTarget(tc.typ, v, avg)); diff != "" {
				t.Errorf("ValueTarget (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTargetsBeyondInt64MilliUnitsAreInvalidNotZero checks that a target MilliValue would read as
// 0 (or wrap) is an invalid target naming why, for every kind of target (issue 21 §1).
func TestTargetsBeyondInt64MilliUnitsAreInvalidNotZero(t *testing.T) {
	huge := ptr.To(resource.MustParse("1e16"))
	targets := map[string]replicas.Target{
		"a custom metric's averageValue": CustomTarget(podpilotv1alpha1.CustomMetricSpec{MetricName: "qps", AverageValue: *huge}),
		"a resource metric's averageValue": func() replicas.Target {
			t, _ := ResourceTarget(podpilotv1alpha1.ResourceMetricSpec{ResourceName: "memory", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: huge})
			return t
		}(),
		"a container resource metric's averageValue": ContainerResourceTarget(podpilotv1alpha1.ContainerResourceMetricSpec{
			ResourceName: "memory", Container: "app", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: huge}),
		"an External or Object value":        ValueTarget(podpilotv1alpha1.ValueTarget, huge, nil),
		"an External or Object averageValue": ValueTarget(podpilotv1alpha1.AverageValueTarget, nil, huge),
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			if !errors.Is(target.Err, replicas.ErrValueOutOfRange) {
				t.Fatalf("target %+v: Err = %v, want ErrValueOutOfRange", target, target.Err)
			}
			_, err := replicas.Calculate(replicas.Input{CurrentReplicas: 1, Target: target, Pods: []replicas.Pod{{Name: "p"}}})
			if !errors.Is(err, replicas.ErrInvalidTarget) || !errors.Is(err, replicas.ErrValueOutOfRange) {
				t.Errorf("calculating with it: err = %v, want ErrInvalidTarget naming ErrValueOutOfRange", err)
			}
		})
	}
}
