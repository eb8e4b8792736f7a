package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	compbasemetrics "k8s.io/component-base/metrics"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/flight"
)

// TestAPanicInOneRoundFailsThatPodAutoscalerOnly drives a panic into the rounds of one
// PodAutoscaler (its Deployment's scale client panics on update) while the controller runs its
// workers: the process survives, the other PodAutoscaler (on a StatefulSet) keeps being scaled,
// and the panicking one shows ScalingActive False InternalError, a Warning event and the counter,
// with its replicas held.
func TestAPanicInOneRoundFailsThatPodAutoscalerOnly(t *testing.T) {
	stsPods := podNamesWith("vg1-vanguard-sts", 2)
	second := seedAutoscaler(checkpointed(2), func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Name, pa.Spec.ScaleTargetKind = "hpa-vg1-vanguard-sts", podpilotv1alpha1.ScaleTargetStatefulSet
	})
	objs := append(append(seedPods(2), statefulSetPods(stsPods...)...), seedDeployment(2), seedStatefulSet(2), seedAutoscaler(checkpointed(2)), second)
	f := newFixture(t, qpsPerPod("3000", append(podNames(2), stsPods...)...), nil, objs...)
	f.kube.PrependReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "scale" {
			panic("injected: the scale client of the Deployment panics")
		}
		return false, nil, nil
	})
	reg := compbasemetrics.NewKubeRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var panicked, scaled bool
	f.runReal(Config{Options: *NewOptions(), CustomSource: f.custom, Metrics: m}, func(*Controller) {
		err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			panicked = condition(f.autoscaler(), podpilotv1alpha1.ConditionScalingActive) == "False "+ReasonInternalError
			scaled = f.replicas("statefulset") == 3
			return panicked && scaled, nil
		})
		if err != nil {
			t.Errorf("ScalingActive of the panicking PodAutoscaler is %s (want False InternalError), the other's StatefulSet has %d replicas (want 3)",
				condition(f.autoscaler(), podpilotv1alpha1.ConditionScalingActive), f.replicas("statefulset"))
		}
	})
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas of the panicking PodAutoscaler's Deployment = %d, want 2 held", got)
	}
	reasons, _ := f.events()
	if !slices.Contains(reasons, "Warning "+ReasonInternalError) {
		t.Errorf("events %v, want a Warning %s", reasons, ReasonInternalError)
	}
	got := series(t, reg, "podpilot_autoscaler_round_panics_total")
	if len(got) != 1 || got[0] == "podpilot_autoscaler_round_panics_total{} 0" {
		t.Errorf("round panics = %v, want at least one counted", got)
	}
}

// TestAPanickingMetricSourceFailsTheMetricNotTheProcess checks that a metric source that panics
// (its calls run on goroutines of their own, shared between rounds) fails the metric it was
// asked for, as any error of the source: the round completes and holds the replicas.
func TestAPanickingMetricSourceFailsTheMetricNotTheProcess(t *testing.T) {
	panics := customFunc(func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
		panic("injected: the custom metric source panics")
	})
	twoMetrics := func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.CustomMetrics = append(pa.Spec.CustomMetrics, podpilotv1alpha1.CustomMetricSpec{MetricName: "zdns_vanguard_errors", AverageValue: resource.MustParse("1")})
	}
	f := newFixture(t, panics, nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2), twoMetrics))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionScalingActive); got != "False "+decision.ReasonFailedGetPodsMetric {
		t.Errorf("ScalingActive = %s, want the metrics failed", got)
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive); c == nil || !strings.Contains(c.Message, flight.ErrPanicked.Error()) {
		t.Errorf("ScalingActive message = %+v, want it to say the call panicked", c)
	}
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas = %d, want 2 held", got)
	}
}
