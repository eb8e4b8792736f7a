package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

func TestDryRunReportsAndNeverScales(t *testing.T) {
	dry := func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.DryRun = true }
	tests := []struct {
		name    string
		objs    []runtime.Object
		custom  customFunc
		mutate  []func(*podpilotv1alpha1.PodAutoscaler)
		want    outcome
		wantMsg string
	}{
		{
			name:   "a dry run above target reports the would-be scale-up in desired, AbleToScale and an event, and keeps the replicas",
			objs:   append(seedPods(2), seedDeployment(2)),
			custom: qpsPerPod("3000", podNames(2)...),
			mutate: []func(*podpilotv1alpha1.PodAutoscaler){dry},
			want: outcome{Replicas: 2, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True DryRunRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Normal DryRunRescale"}},
			wantMsg: "would scale vg1-vanguard from 2 to 3: pods metric zdns_vanguard_qps above target",
		},
		{
			name:   "a dry run outside [min, max] reports the fast path back to the bound without scaling",
			objs:   append(seedPods(7), seedDeployment(7)),
			custom: qpsPerPod("2000", podNames(7)...),
			mutate: []func(*podpilotv1alpha1.PodAutoscaler){dry},
			want: outcome{Replicas: 7, Current: 7, Desired: 5, Targets: "<unknown>/2k",
				Conditions: map[string]string{"AbleToScale": "True DryRunRescale", "ScalingActive": "<none>", "ScalingLimited": "<none>"},
				Events:     []string{"Normal DryRunRescale"}},
			wantMsg: "would scale vg1-vanguard from 7 to 5",
		},
		{
			name:   "a dry run within tolerance reports nothing to do",
			objs:   append(seedPods(2), seedDeployment(2)),
			custom: qpsPerPod("2100", podNames(2)...),
			mutate: []func(*podpilotv1alpha1.PodAutoscaler){dry},
			want: outcome{Replicas: 2, Current: 2, Desired: 2, Targets: "2100/2k",
				Conditions: map[string]string{"AbleToScale": "True ReadyForNewScale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.custom, nil, append(tt.objs, seedAutoscaler(tt.mutate...))...)
			if err := f.sync(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, lines := outcomeOf(f, "")
			for _, l := range lines {
				if tt.wantMsg != "" && !strings.Contains(l, tt.wantMsg) {
					t.Errorf("event %q does not contain %q", l, tt.wantMsg)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if calls := f.scaleCalls(); calls["update"] != 0 {
				t.Errorf("scale updates = %d, want 0 in a dry run", calls["update"])
			}
			pa := f.autoscaler()
			if pa.Status.Mode != podpilotv1alpha1.DryRunMode {
				t.Errorf("mode = %q, want DryRun", pa.Status.Mode)
			}
			if pa.Status.LastScaleTime != nil || pa.Status.ScaleEvents != nil {
				t.Errorf("lastScaleTime = %v, scaleEvents = %v; a dry run records no rescale of its own", pa.Status.LastScaleTime, pa.Status.ScaleEvents)
			}
		})
	}
}

func TestDryRunCountsTheTargetsRealChangesAgainstThePolicies(t *testing.T) {
	// With the default behavior (per 15 s: +100% or +4 pods), a target the other autoscaler just
	// took from 2 to 4 may grow by at most max(2*2, 2+4) - 4 = 2 more pods this period: the dry run
	// must see the real +2 as a scale event, or it would report 8 where the policy allows 6.
	pods := podNames(4)
	f := newFixture(t, qpsPerPod("8000", pods...), nil, append(seedPods(4), seedDeployment(4),
		seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.DryRun, pa.Spec.MaxReplicas = true, 20
			pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{}
			pa.Status.CurrentReplicas = 2
		}))...)
	if err := f.sync(); err != nil {
		t.Fatalf("sync: %v", err)
	}
	pa := f.autoscaler()
	if pa.Status.DesiredReplicas != 6 {
		t.Errorf("desired = %d, want 6 (2 at the period's start, +4 pods allowed)", pa.Status.DesiredReplicas)
	}
	if pa.Status.ScaleEvents == nil || len(pa.Status.ScaleEvents.ScaleUp) != 1 || pa.Status.ScaleEvents.ScaleUp[0].ReplicaChange != 2 {
		t.Errorf("scaleEvents = %+v, want the observed +2 only", pa.Status.ScaleEvents)
	}
	if f.replicas("") != 4 {
		t.Errorf("replicas = %d, want 4 (never scaled)", f.replicas(""))
	}
}

func TestActiveModeIsShown(t *testing.T) {
	f := newFixture(t, qpsPerPod("2000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	if err := f.sync(); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := f.autoscaler().Status.Mode; got != podpilotv1alpha1.ActiveMode {
		t.Errorf("mode = %q, want Active", got)
	}
}
