package hpaconv

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

func selectPolicy(s autoscalingv2.ScalingPolicySelect) *autoscalingv2.ScalingPolicySelect { return &s }

func ppaSelect(s podpilotv1alpha1.ScalingPolicySelect) *podpilotv1alpha1.ScalingPolicySelect {
	return &s
}

// TestConvertBehavior: every behavior field is carried over, and kube-controller-manager's
// tolerance and downscale stabilization are written in where the HPA leaves them to it.
func TestConvertBehavior(t *testing.T) {
	kcm := ControllerFlags{Tolerance: 0.05, DownscaleStabilization: 120*time.Second + 500*time.Millisecond, SyncPeriod: 15 * time.Second}
	tol := func(s string) *resource.Quantity { return qty(s) }
	tests := []struct {
		name string
		in   *autoscalingv2.HorizontalPodAutoscalerBehavior
		want *podpilotv1alpha1.PodAutoscalerBehavior
	}{
		{name: "without behavior there is none: the legacy normalization stays, the flags go to the server"},
		{name: "an empty behavior gets the controller's tolerance in both directions and its window for scale-down only",
			in: &autoscalingv2.HorizontalPodAutoscalerBehavior{},
			want: &podpilotv1alpha1.PodAutoscalerBehavior{
				ScaleUp:   &podpilotv1alpha1.ScalingRules{Tolerance: tol("50m")},
				ScaleDown: &podpilotv1alpha1.ScalingRules{Tolerance: tol("50m"), StabilizationWindowSeconds: ptr(int32(120))},
			}},
		{name: "every field of both directions is carried over, the HPA's own tolerance and window winning over the flags",
			in: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(60)), SelectPolicy: selectPolicy(autoscalingv2.MinChangePolicySelect),
					Policies:  []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 60}, {Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 30}},
					Tolerance: tol("0.2")},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(0)), SelectPolicy: selectPolicy(autoscalingv2.DisabledPolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 1800}}, Tolerance: tol("0")},
			},
			want: &podpilotv1alpha1.PodAutoscalerBehavior{
				ScaleUp: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr(int32(60)), SelectPolicy: ppaSelect(podpilotv1alpha1.MinChangePolicySelect),
					Policies:  []podpilotv1alpha1.ScalingPolicy{{Type: podpilotv1alpha1.PodsScalingPolicy, Value: 4, PeriodSeconds: 60}, {Type: podpilotv1alpha1.PercentScalingPolicy, Value: 50, PeriodSeconds: 30}},
					Tolerance: tol("0.2")},
				ScaleDown: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr(int32(0)), SelectPolicy: ppaSelect(podpilotv1alpha1.DisabledPolicySelect),
					Policies: []podpilotv1alpha1.ScalingPolicy{{Type: podpilotv1alpha1.PercentScalingPolicy, Value: 10, PeriodSeconds: 1800}}, Tolerance: tol("0")},
			}},
		{name: "a per-direction tolerance set on one side only: the other takes the controller's",
			in: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: tol("0.3")}},
			want: &podpilotv1alpha1.PodAutoscalerBehavior{
				ScaleUp:   &podpilotv1alpha1.ScalingRules{Tolerance: tol("50m")},
				ScaleDown: &podpilotv1alpha1.ScalingRules{Tolerance: tol("0.3"), StabilizationWindowSeconds: ptr(int32(120))},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hpa(resourceMetric(corev1.ResourceCPU, utilization(50)))
			h.Spec.Behavior = tc.in
			pa, err := Convert(h, &kcm)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if diff := cmp.Diff(tc.want, pa.Spec.Behavior); diff != "" {
				t.Errorf("behavior (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertBehaviorRefusals: what a PodAutoscaler's behavior cannot hold is refused naming
// the field.
func TestConvertBehaviorRefusals(t *testing.T) {
	policies := func(n int) []autoscalingv2.HPAScalingPolicy {
		out := make([]autoscalingv2.HPAScalingPolicy, n)
		for i := range out {
			out[i] = autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: int32(i + 1), PeriodSeconds: 15}
		}
		return out
	}
	tests := []struct {
		name  string
		in    autoscalingv2.HorizontalPodAutoscalerBehavior
		flags func(*ControllerFlags)
		want  []string
	}{
		{name: "more than 10 policies in a direction are refused",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{Policies: policies(11)}},
			want: []string{"spec.behavior.scaleUp.policies"}},
		{name: "an empty policy list is refused",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{}}},
			want: []string{"spec.behavior.scaleDown.policies"}},
		{name: "a policy of an unknown type, no value and a period over 1800 s is refused field by field",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", PeriodSeconds: 3600}}}},
			want: []string{"spec.behavior.scaleDown.policies[0].type", "spec.behavior.scaleDown.policies[0].value", "spec.behavior.scaleDown.policies[0].periodSeconds"}},
		{name: "an unknown selectPolicy is refused",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: selectPolicy("Average")}},
			want: []string{"spec.behavior.scaleUp.selectPolicy"}},
		{name: "a stabilization window over 3600 s is refused",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(3601))}},
			want: []string{"spec.behavior.scaleUp.stabilizationWindowSeconds"}},
		{name: "a negative tolerance is refused",
			in:   autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{Tolerance: qty("-0.1")}},
			want: []string{"spec.behavior.scaleUp.tolerance"}},
		{name: "a controller tolerance no quantity holds exactly is refused where the HPA leaves the tolerance to it",
			flags: func(f *ControllerFlags) { f.Tolerance = 1e-12 },
			want:  []string{"spec.behavior"}},
		{name: "a controller downscale stabilization over 3600 s is refused where the HPA leaves the window to it",
			flags: func(f *ControllerFlags) { f.DownscaleStabilization = 2 * time.Hour },
			want:  []string{"spec.behavior.scaleDown.stabilizationWindowSeconds"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hpa(resourceMetric(corev1.ResourceCPU, utilization(50)))
			h.Spec.Behavior = &tc.in
			flags := UpstreamDefaults()
			if tc.flags != nil {
				tc.flags(&flags)
			}
			_, err := Convert(h, &flags)
			if diff := cmp.Diff(tc.want, refusedFields(t, err)); diff != "" {
				t.Errorf("refused fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertControllerWindowOverTheBoundIsFineWithoutBehavior: an HPA without behavior takes the
// window from the server's flag, which has no 3600 s bound, so it converts.
func TestConvertControllerWindowOverTheBoundIsFineWithoutBehavior(t *testing.T) {
	flags := UpstreamDefaults()
	flags.DownscaleStabilization = 2 * time.Hour
	if _, err := Convert(hpa(resourceMetric(corev1.ResourceCPU, utilization(50))), &flags); err != nil {
		t.Errorf("Convert: %v", err)
	}
}

// TestServerFlagsCarryEveryControllerFlag: each kube-controller-manager flag is reported as
// podpilot's with its value.
func TestServerFlagsCarryEveryControllerFlag(t *testing.T) {
	f := ControllerFlags{Tolerance: 0.2, DownscaleStabilization: 10 * time.Minute, SyncPeriod: 30 * time.Second,
		CPUInitializationPeriod: 3 * time.Minute, InitialReadinessDelay: 45 * time.Second}
	var got []string
	for _, s := range ServerFlags(f) {
		got = append(got, s.Upstream+" -> "+s.String())
	}
	want := []string{
		"--horizontal-pod-autoscaler-sync-period -> --autoscaler-sync-period=30s",
		"--horizontal-pod-autoscaler-sync-period -> --autoscaler-align-to-scrapes=false",
		"--horizontal-pod-autoscaler-cpu-initialization-period -> --autoscaler-cpu-initialization-period=3m0s",
		"--horizontal-pod-autoscaler-initial-readiness-delay -> --autoscaler-initial-readiness-delay=45s",
		"--horizontal-pod-autoscaler-tolerance -> --autoscaler-tolerance=0.2",
		"--horizontal-pod-autoscaler-downscale-stabilization -> --autoscaler-downscale-stabilization=10m0s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server flags (-want +got):\n%s", diff)
	}
}

// TestControllerFlagsValidate: values kube-controller-manager would not run with are errors.
func TestControllerFlagsValidate(t *testing.T) {
	if errs := UpstreamDefaults().Validate(); len(errs) != 0 {
		t.Errorf("upstream defaults: %v", errs)
	}
	bad := ControllerFlags{Tolerance: -1, SyncPeriod: 0, DownscaleStabilization: -time.Second, CPUInitializationPeriod: -time.Second, InitialReadinessDelay: -time.Second}
	if errs := bad.Validate(); len(errs) != 5 {
		t.Errorf("Validate = %v, want all 5 problems", errs)
	}
}

// TestConvertWithoutControllerFlagsLeavesThemToTheServer: with no kube-controller-manager flags
// given, the behavior is carried over as written, unset fields left to the podpilot server's
// flags (the e2e framework's use, whose podpilot runs with the cluster's controller settings).
func TestConvertWithoutControllerFlagsLeavesThemToTheServer(t *testing.T) {
	h := hpa(resourceMetric(corev1.ResourceCPU, utilization(50)))
	h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(30))}}
	pa, err := Convert(h, nil)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	want := &podpilotv1alpha1.PodAutoscalerBehavior{ScaleUp: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr(int32(30))}}
	if diff := cmp.Diff(want, pa.Spec.Behavior); diff != "" {
		t.Errorf("behavior (-want +got):\n%s", diff)
	}
}
