package hpaconv

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// MigratedFromAnnotation marks a PodAutoscaler written by Convert; its value is the HPA's name.
// `podpilot migrate --apply` only ever changes a PodAutoscaler that carries it.
const MigratedFromAnnotation = "podpilot.io/migrated-from-hpa"

// defaultCPUUtilization is the target autoscaling/v2 defaults an HPA without metrics to (cpu at
// 80% utilization), as the API server stores it.
const defaultCPUUtilization int32 = 80

// Convert returns the PodAutoscaler equivalent to h under kube-controller-manager's flags:
// the same namespace, name, target, bounds, metrics and behavior, with the flags that a
// PodAutoscaler field can hold written into it (see convertBehavior). With flags nil, nothing
// is written in: the PodAutoscaler then takes those values from the podpilot server's flags,
// which must equal kube-controller-manager's. dryRun is left false. When any field of h has no
// exact equivalent, it returns a *RefusedError listing each one and no PodAutoscaler.
func Convert(h *autoscalingv2.HorizontalPodAutoscaler, flags *ControllerFlags) (*podpilotv1alpha1.PodAutoscaler, error) {
	var rs refusals
	specPath := field.NewPath("spec")
	pa := &podpilotv1alpha1.PodAutoscaler{
		TypeMeta: metav1.TypeMeta{APIVersion: podpilotv1alpha1.SchemeGroupVersion.String(), Kind: "PodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{
			Name: h.Name, Namespace: h.Namespace,
			Annotations: map[string]string{MigratedFromAnnotation: h.Name},
		},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: scaleTargetKind(h.Spec.ScaleTargetRef, specPath.Child("scaleTargetRef"), &rs),
			ScaleTargetName: h.Spec.ScaleTargetRef.Name,
			MinReplicas:     copyInt32(h.Spec.MinReplicas),
			MaxReplicas:     h.Spec.MaxReplicas,
		},
	}
	metrics := h.Spec.Metrics
	if len(metrics) == 0 {
		metrics = []autoscalingv2.MetricSpec{defaultMetric()}
	}
	addMetrics(&pa.Spec, metrics, specPath.Child("metrics"), &rs)
	pa.Spec.Behavior = convertBehavior(h.Spec.Behavior, flags, specPath.Child("behavior"), &rs)
	if len(rs) > 0 {
		return nil, &RefusedError{HPA: h.Namespace + "/" + h.Name, Refusals: rs}
	}
	return pa, nil
}

// scaleTargetKind returns the PodAutoscaler's kind for ref: apps/v1 Deployments and StatefulSets
// only, the kinds whose pods and scale a PodAutoscaler reads.
func scaleTargetKind(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, rs *refusals) podpilotv1alpha1.ScaleTargetKind {
	if ref.APIVersion != "apps/v1" {
		rs.add(p.Child("apiVersion"), quoted(ref.APIVersion), "a PodAutoscaler scales apps/v1 Deployments and StatefulSets only")
		return ""
	}
	switch ref.Kind {
	case "Deployment":
		return podpilotv1alpha1.ScaleTargetDeployment
	case "StatefulSet":
		return podpilotv1alpha1.ScaleTargetStatefulSet
	}
	rs.add(p.Child("kind"), quoted(ref.Kind), "a PodAutoscaler scales apps/v1 Deployments and StatefulSets only")
	return ""
}

// defaultMetric is the metric autoscaling/v2 defaults an HPA without metrics to.
func defaultMetric() autoscalingv2.MetricSpec {
	u := defaultCPUUtilization
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u},
		},
	}
}

func copyInt32(v *int32) *int32 {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}

// quoted returns s in quotes, so that an empty value still shows.
func quoted(s string) string { return `"` + s + `"` }
