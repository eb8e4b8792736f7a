package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

var errProm = errors.New("prometheus unavailable")

// outcome is what a round leaves behind, compared per case.
type outcome struct {
	Replicas   int32
	Current    int32
	Desired    int32
	Conditions map[string]string
	Events     []string
	Targets    string
}

// outcomeOf reads the stored objects and drains the events, returning their full lines too.
func outcomeOf(f *fixture, kind string) (outcome, []string) {
	pa := f.autoscaler()
	o := outcome{Replicas: f.replicas(kind), Current: pa.Status.CurrentReplicas, Desired: pa.Status.DesiredReplicas,
		Conditions: map[string]string{}, Targets: pa.Status.Targets}
	for _, c := range []string{podpilotv1alpha1.ConditionAbleToScale, podpilotv1alpha1.ConditionScalingActive, podpilotv1alpha1.ConditionScalingLimited} {
		o.Conditions[c] = condition(pa, c)
	}
	var lines []string
	o.Events, lines = f.events()
	return o, lines
}

func TestScalesOnCustomMetric(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		objs    []runtime.Object
		custom  customFunc
		mutate  func(*podpilotv1alpha1.PodAutoscaler)
		want    outcome
		wantMsg string
	}{
		{
			name:   "qps 3000 per pod on 2 replicas against 2000 scales to 3 (seed 000)",
			objs:   append(seedPods(2), seedDeployment(2)),
			custom: qpsPerPod("3000", podNames(2)...),
			want: outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Normal SuccessfulRescale"}},
			wantMsg: "New size: 3; reason: pods metric zdns_vanguard_qps above target",
		},
		{
			name:   "a proposal beyond maxReplicas is clamped to 5",
			objs:   append(seedPods(4), seedDeployment(4)),
			custom: qpsPerPod("6000", podNames(4)...),
			want: outcome{Replicas: 5, Current: 4, Desired: 5, Targets: "6k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "True TooManyReplicas"},
				Events:     []string{"Normal SuccessfulRescale"}},
		},
		{
			name:   "a statefulset target, kind matched case-insensitively, scales through its scale subresource",
			kind:   "statefulset",
			objs:   append(statefulSetPods(podNames(2)...), seedStatefulSet(2)),
			custom: qpsPerPod("3000", podNames(2)...),
			mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.ScaleTargetKind = "StatefulSet" },
			want: outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Normal SuccessfulRescale"}},
		},
		{
			name:   "a load within tolerance keeps the replicas and writes no event",
			objs:   append(seedPods(2), seedDeployment(2)),
			custom: qpsPerPod("2100", podNames(2)...),
			want: outcome{Replicas: 2, Current: 2, Desired: 2, Targets: "2100/2k",
				Conditions: map[string]string{"AbleToScale": "True ReadyForNewScale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutate := []func(*podpilotv1alpha1.PodAutoscaler){}
			if tt.mutate != nil {
				mutate = append(mutate, tt.mutate)
			}
			f := newFixture(t, tt.custom, nil, append(tt.objs, seedAutoscaler(mutate...))...)
			if err := f.sync(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, lines := outcomeOf(f, tt.kind)
			for _, l := range lines {
				if tt.wantMsg != "" && !strings.Contains(l, tt.wantMsg) {
					t.Errorf("event %q does not contain %q", l, tt.wantMsg)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			pa := f.autoscaler()
			if pa.Status.Reference != "Deployment/vg1-vanguard" && pa.Status.Reference != "StatefulSet/vg1-vanguard" {
				t.Errorf("reference = %q", pa.Status.Reference)
			}
			if pa.Status.ObservedGeneration != 1 {
				t.Errorf("observedGeneration = %d, want 1", pa.Status.ObservedGeneration)
			}
		})
	}
}

func TestShowsEveryMetricInTargetsAndCurrentMetrics(t *testing.T) {
	pods := podNames(2)
	f := newFixture(t, qpsPerPod("1500", pods...), usagePerPod("150m", "120Mi", pods...),
		append(seedPods(2), seedDeployment(2), seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.ResourceMetrics = []podpilotv1alpha1.ResourceMetricSpec{
				{ResourceName: corev1.ResourceCPU, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
				{ResourceName: corev1.ResourceMemory, TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("256Mi"))},
			}
		}))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	pa := f.autoscaler()
	if want := "1500/2k, 30%/50%, 120Mi/256Mi"; pa.Status.Targets != want {
		t.Errorf("targets = %q, want %q", pa.Status.Targets, want)
	}
	if want := "Deployment/vg1-vanguard"; pa.Status.Reference != want {
		t.Errorf("reference = %q, want %q", pa.Status.Reference, want)
	}
	want := []podpilotv1alpha1.MetricStatus{
		{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", AverageValue: ptr.To(resource.MustParse("1500"))},
		{Type: podpilotv1alpha1.ResourceMetricSourceType, Name: "cpu", AverageValue: ptr.To(resource.MustParse("150m")), AverageUtilization: ptr.To[int32](30)},
		{Type: podpilotv1alpha1.ResourceMetricSourceType, Name: "memory", AverageValue: ptr.To(resource.MustParse("120Mi"))},
	}
	if diff := cmp.Diff(want, pa.Status.CurrentMetrics, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("currentMetrics (-want +got):\n%s", diff)
	}
	if f.replicas("") != 2 {
		t.Errorf("replicas = %d, want 2 (no metric asks for a change)", f.replicas(""))
	}
}

func TestMissingTargetIsFailedGetScaleNotAnError(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedAutoscaler())...)
	if err := f.sync(); err != nil {
		t.Fatalf("sync: %v, want nil (the periodic resync retries)", err)
	}
	got, _ := outcomeOf(f, "")
	want := outcome{Targets: "<unknown>/2k", Events: []string{"Warning FailedGetScale"},
		Conditions: map[string]string{"AbleToScale": "False FailedGetScale", "ScalingActive": "<none>", "ScalingLimited": "<none>"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

func TestFailedMetricsNeverScaleDown(t *testing.T) {
	pods := podNames(4)
	withCPU := func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.ResourceMetrics = []podpilotv1alpha1.ResourceMetricSpec{
			{ResourceName: corev1.ResourceCPU, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
		}
	}
	tests := []struct {
		name     string
		resource resourceFunc
		mutate   func(*podpilotv1alpha1.PodAutoscaler)
		want     outcome
	}{
		{
			name: "the only metric failing holds the replicas with ScalingActive False and a Warning",
			want: outcome{Replicas: 4, Current: 4, Desired: 4, Targets: "<unknown>/2k",
				Events:     []string{"Warning FailedGetPodsMetric"},
				Conditions: map[string]string{"AbleToScale": "True SucceededGetScale", "ScalingActive": "False FailedGetPodsMetric", "ScalingLimited": "<none>"}},
		},
		{
			name:     "a failing custom metric holds the replicas even when cpu alone would scale down",
			resource: usagePerPod("50m", "100Mi", pods...),
			mutate:   withCPU,
			want: outcome{Replicas: 4, Current: 4, Desired: 4, Targets: "<unknown>/2k, 10%/50%",
				Events:     []string{"Warning FailedGetPodsMetric"},
				Conditions: map[string]string{"AbleToScale": "True SucceededGetScale", "ScalingActive": "False FailedGetPodsMetric", "ScalingLimited": "<none>"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mutate []func(*podpilotv1alpha1.PodAutoscaler)
			if tt.mutate != nil {
				mutate = append(mutate, tt.mutate)
			}
			f := newFixture(t, failingCustom(errProm), tt.resource, append(seedPods(4), seedDeployment(4), seedAutoscaler(mutate...))...)
			if err := f.sync(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, lines := outcomeOf(f, "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			for _, l := range lines {
				if !strings.Contains(l, errProm.Error()) || !strings.Contains(l, "zdns_vanguard_qps") {
					t.Errorf("event %q does not name the metric and the cause", l)
				}
			}
		})
	}
}

func TestHistoryPersistedInStatusSurvivesARestart(t *testing.T) {
	// Scale down by at most one pod per 10 minutes, without stabilization: the second round
	// may only hold if the first round's scale event was read back from status.
	f := newFixture(t, qpsPerPod("200", podNames(5)...), nil, append(seedPods(5), seedDeployment(5),
		seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{ScaleDown: &podpilotv1alpha1.ScalingRules{
				StabilizationWindowSeconds: ptr.To[int32](0),
				Policies:                   []podpilotv1alpha1.ScalingPolicy{{Type: podpilotv1alpha1.PodsScalingPolicy, Value: 1, PeriodSeconds: 600}},
			}}
		}))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.replicas(""); got != 4 {
		t.Fatalf("first round: replicas = %d, want 4 (one pod per period)", got)
	}
	first := f.autoscaler().Status
	if first.ScaleEvents == nil || len(first.ScaleEvents.ScaleDown) != 1 || len(first.Recommendations) == 0 {
		t.Fatalf("first round did not persist its history: %+v", first)
	}

	f.restart()
	f.clock.Step(time.Minute)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.replicas(""); got != 4 {
		t.Errorf("after restart: replicas = %d, want 4 (the persisted scale event still limits)", got)
	}
	second := f.autoscaler().Status
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionScalingLimited); got != "True ScaleDownLimit" {
		t.Errorf("ScalingLimited = %s, want True ScaleDownLimit", got)
	}
	if diff := cmp.Diff(first.ScaleEvents, second.ScaleEvents); diff != "" {
		t.Errorf("scale events changed without a rescale (-first +second):\n%s", diff)
	}

	f.clock.Step(10 * time.Minute)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.replicas(""); got != 3 {
		t.Errorf("after the policy period: replicas = %d, want 3", got)
	}
}

func TestStatusUpdateSkippedWhenUnchanged(t *testing.T) {
	f := newFixture(t, failingCustom(errProm), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	for range 3 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		f.clock.Step(15 * time.Second)
	}
	if got := f.statusWrites(); got != 1 {
		t.Errorf("status writes = %d, want 1", got)
	}
}

func TestFailedScaleUpdateIsAConditionAnEventAndAnError(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	errDenied := errors.New("admission denied")
	f.kube.PrependReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "scale", nil, errDenied
	})
	if err := f.sync(); !errors.Is(err, errDenied) {
		t.Fatalf("sync error = %v, want %v for a rate-limited retry", err, errDenied)
	}
	got, _ := outcomeOf(f, "")
	want := outcome{Replicas: 2, Current: 2, Desired: 0, Targets: "3k/2k", Events: []string{"Warning FailedRescale"},
		Conditions: map[string]string{"AbleToScale": "False FailedUpdateScale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

func TestDeletedAutoscalerIsNotAnError(t *testing.T) {
	f := newFixture(t, nil, nil)
	if err := f.sync(); err != nil {
		t.Errorf("sync: %v, want nil", err)
	}
}

func TestAutoscalersSharingAMetricShareOneSourceCallPerRound(t *testing.T) {
	var calls int
	stsPods := podNamesWith("vg1-vanguard-sts", 2)
	serve := qpsPerPod("3000", append(podNames(2), stsPods...)...)
	counting := customFunc(func(ctx context.Context, ns string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		calls++
		return serve(ctx, ns, sel, info, msel)
	})
	second := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Name, pa.Spec.ScaleTargetKind = "hpa-vg1-vanguard-sts", podpilotv1alpha1.ScaleTargetStatefulSet
	})
	objs := append(append(seedPods(2), statefulSetPods(stsPods...)...), seedDeployment(2), seedStatefulSet(2), seedAutoscaler(), second)
	f := newFixture(t, counting, nil, objs...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.ctrl.sync(t.Context(), cache.ObjectName{Namespace: ns, Name: second.Name}); err != nil {
		t.Fatal(err)
	}
	if f.replicas("") != 3 || f.replicas("statefulset") != 3 {
		t.Errorf("replicas = %d and %d, want both scaled to 3", f.replicas(""), f.replicas("statefulset"))
	}
	if calls != 1 {
		t.Errorf("custom source calls = %d, want 1 for two autoscalers in one round", calls)
	}
}
