package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The differential cases of issue 31 §1: what Kubernetes 1.37 changed in
// the HPA, against kube-controller-manager 1.37 with its defaults (scale to
// zero on, HPAGeneration on, per-direction tolerance GA). They run in
// TestDifferentialStockHPAAgainstPodAutoscaler beside the others. Every
// checkpoint of every case also compares the two autoscalers' ScaledToZero
// and ScalingActive conditions and checks that each observed its current
// generation (autoscalerState).

// autoscalerState is what a checkpoint compares of an autoscaler's status
// besides its replicas: the ScaledToZero and ScalingActive conditions
// (status and reason, "-" when absent) and the generation it observed.
type autoscalerState struct {
	scaledToZero, scalingActive    string
	generation, observedGeneration int64
}

// conditions is the part of s both autoscalers must agree on.
func (s autoscalerState) conditions() string {
	return fmt.Sprintf("ScaledToZero=%s ScalingActive=%s", s.scaledToZero, s.scalingActive)
}

// bothStates reads the HPA's and the PodAutoscaler's autoscalerState.
func bothStates(ctx context.Context, t *testing.T, ns string) ([2]autoscalerState, error) {
	var out [2]autoscalerState
	h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, diffHPAApp, metav1.GetOptions{})
	if err != nil {
		return out, fmt.Errorf("get HPA: %w", err)
	}
	out[0] = autoscalerState{scaledToZero: "-", scalingActive: "-", generation: h.Generation, observedGeneration: ptr.Deref(h.Status.ObservedGeneration, 0)}
	for _, c := range h.Status.Conditions {
		switch c.Type {
		case autoscalingv2.ScaledToZero:
			out[0].scaledToZero = string(c.Status) + "/" + c.Reason
		case autoscalingv2.ScalingActive:
			out[0].scalingActive = string(c.Status) + "/" + c.Reason
		}
	}
	pa, err := getPodAutoscaler(ctx, t, ns, diffPPAApp)
	if err != nil {
		return out, fmt.Errorf("get PodAutoscaler: %w", err)
	}
	out[1] = autoscalerState{scaledToZero: "-", scalingActive: "-", generation: pa.Generation, observedGeneration: pa.Status.ObservedGeneration}
	if c := meta.FindStatusCondition(pa.Status.Conditions, string(autoscalingv2.ScaledToZero)); c != nil {
		out[1].scaledToZero = string(c.Status) + "/" + c.Reason
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, string(autoscalingv2.ScalingActive)); c != nil {
		out[1].scalingActive = string(c.Status) + "/" + c.Reason
	}
	return out, nil
}

// v137Cases are the cases of what 1.37 changed.
func v137Cases() []differentialCase {
	return []differentialCase{scaledToZeroByTheAutoscalerCase(), zeroSetByAPersonCase(), tolerancePerDirectionCase(), newGenerationInsideTheWindowCase(),
		podLevelRequestsCase()}
}

// podLevelRequestsCase: cpu Utilization of pods whose cpu request is set
// at the pod level (spec.resources, PodLevelResources beta and on since
// 1.34) and not in their container: both divide by the pod-level request,
// on cpuUtilizationCase's schedule.
func podLevelRequestsCase() differentialCase {
	dc := cpuUtilizationCase()
	dc.name = "pod-level cpu requests"
	dc.deployment = func(name string, replicas int32) *appsv1.Deployment {
		d := cluster.Deployment(name, replicas)
		spec := &d.Spec.Template.Spec
		for i := range spec.Containers {
			delete(spec.Containers[i].Resources.Requests, corev1.ResourceCPU)
		}
		spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		return d
	}
	return dc
}

// externalAverageCase is a case of 2 pods between minReplicas and 10 on an
// External gauge of the namespace with an AverageValue target of 10 per
// replica, under behavior.
func externalAverageCase(name, metric string, minReplicas int32, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, steps []differentialStep) differentialCase {
	return differentialCase{
		name: name,
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, minReplicas, 10, behavior, framework.ExternalMetric(metric, nil, 10))
		},
		initial: 2,
		level:   metric,
		drive:   gaugeDrive(metric, nil),
		steps:   steps,
	}
}

// scaledToZeroByTheAutoscalerCase: minReplicas 0 with an External metric
// (allowed since HPAScaleToZero is on by default in 1.37). The autoscaler
// scales to zero once the window passes, sets ScaledToZero True, reads the
// metric at zero and scales from zero by ceil(usage/target); that rescale
// sets ScaledToZero False NotScaledToZero.
func scaledToZeroByTheAutoscalerCase() differentialCase {
	return externalAverageCase("scaled to zero by the autoscaler and back", "diff_zero_queue", 0, nil, []differentialStep{
		{20, 15 * time.Second, 2, "20 at 10 per replica: at the target, no rescale yet (no ScaledToZero)"},
		{0, 15 * time.Second, 2, "0 wants 0; held by the 30s downscale stabilization"},
		{0, 40 * time.Second, 0, "scaled to zero by the autoscaler (minReplicas 0): ScaledToZero True"},
		{40, 30 * time.Second, 4, "from zero: ceil(40/10) = 4, within the scale-up limit max(2×0, 4); ScaledToZero False"},
	})
}

// zeroSetByAPersonCase: a person sets both workloads to replicas: 0 under
// autoscalers with minReplicas 1. Neither autoscaler set that zero, so both
// disable scaling (ScalingActive False ScalingDisabled) though the metric
// asks for 4; when the person sets 2 again, scaling resumes.
func zeroSetByAPersonCase() differentialCase {
	c := externalAverageCase("zero set by a person", "diff_person_queue", 1, nil, []differentialStep{
		{20, 15 * time.Second, 2, "at the target"},
		{40, 30 * time.Second, 0, "a person scaled both to 0: scaling disabled though 40 asks for 4"},
		{40, 35 * time.Second, 4, "the person scaled both to 2: scaling resumes, 40 asks for 4"},
	})
	c.actions = map[int]func(context.Context, *testing.T, string){
		1: func(ctx context.Context, t *testing.T, ns string) { scaleBoth(ctx, t, ns, 0) },
		2: func(ctx context.Context, t *testing.T, ns string) { scaleBoth(ctx, t, ns, 2) },
	}
	return c
}

// tolerancePerDirectionCase: a scale-up tolerance of 0.5 and a scale-down
// tolerance of 0.3 (GA in 1.37), each holding where the controller's 0.1
// would rescale.
func tolerancePerDirectionCase() differentialCase {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   &autoscalingv2.HPAScalingRules{Tolerance: resource.NewMilliQuantity(500, resource.DecimalSI)},
		ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: resource.NewMilliQuantity(300, resource.DecimalSI)},
	}
	return externalAverageCase("tolerance per direction", "diff_tolerance_queue", 1, behavior, []differentialStep{
		{20, 15 * time.Second, 2, "at the target"},
		{28, 20 * time.Second, 2, "ratio 1.4: within the scale-up tolerance 0.5 (0.1 would scale to 3)"},
		{40, 25 * time.Second, 4, "ratio 2: ceil(40/10) = 4"},
		{30, 45 * time.Second, 4, "ratio 0.75: within the scale-down tolerance 0.3 past the 30s window (0.1 would scale to 3)"},
		{20, 50 * time.Second, 2, "ratio 0.5: ceil(20/10) = 2 after the window"},
	})
}

// newGenerationInsideTheWindowCase: a person lowers both targets from 10 to
// 4 per replica (a new generation) while a scale-down is held by the
// window. Both reconcile the new generation at once (1.37 enqueues a new
// generation without waiting for the next sync), observe it, and scale by
// the new target within 10 s, less than the 15 s sync period.
func newGenerationInsideTheWindowCase() differentialCase {
	c := externalAverageCase("new generation inside the window", "diff_generation_queue", 1, nil, []differentialStep{
		{40, 30 * time.Second, 4, "ratio 2: 4"},
		{20, 15 * time.Second, 4, "wants 2; held by the 30s downscale stabilization"},
		{20, 10 * time.Second, 5, "target 4 per replica (generation 2): ceil(20/4) = 5 within 10 s, reconciled at once"},
		{20, 20 * time.Second, 5, "20 over 5 at 4 each: held"},
	})
	c.actions = map[int]func(context.Context, *testing.T, string){
		2: func(ctx context.Context, t *testing.T, ns string) { setBothAverageTargets(ctx, t, ns, 4) },
	}
	return c
}

// scaleBoth sets both workloads' replicas, as a person with kubectl scale would.
func scaleBoth(ctx context.Context, t *testing.T, ns string, replicas int32) {
	t.Helper()
	for _, app := range []string{diffHPAApp, diffPPAApp} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := cluster.Client.AppsV1().Deployments(ns).GetScale(ctx, app, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Replicas = replicas
			_, err = cluster.Client.AppsV1().Deployments(ns).UpdateScale(ctx, app, s, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("scale %s to %d: %v", app, replicas, err)
		}
	}
}

// setBothAverageTargets sets the first metric's AverageValue target of the
// HPA to target, and the PodAutoscaler's spec to its conversion.
func setBothAverageTargets(ctx context.Context, t *testing.T, ns string, target int64) {
	t.Helper()
	var hpa *autoscalingv2.HorizontalPodAutoscaler
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, diffHPAApp, metav1.GetOptions{})
		if err != nil {
			return err
		}
		h.Spec.Metrics[0].External.Target.AverageValue = resource.NewQuantity(target, resource.DecimalSI)
		hpa, err = cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Update(ctx, h, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update the HPA's target: %v", err)
	}
	want, err := framework.PodAutoscalerFor(hpa, diffPPAApp, diffPPAApp)
	if err != nil {
		t.Fatal(err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pa, err := getPodAutoscaler(ctx, t, ns, diffPPAApp)
		if err != nil {
			return err
		}
		pa.Spec = want.Spec
		_, err = podpilotClient(t).AutoscalingV1alpha1().PodAutoscalers(ns).Update(ctx, pa, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("update the PodAutoscaler's target: %v", err)
	}
}
