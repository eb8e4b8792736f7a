package framework

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
)

// PodAutoscalerFor is the PodAutoscaler equivalent to the stock HPA h, named
// name and scaling Deployment target: the same bounds, the same metrics and
// the same behavior, tolerance included, as `podpilot migrate` converts them
// (pkg/autoscaler/hpaconv). What h leaves to kube-controller-manager's flags is
// left to podpilot's, which the e2e cluster sets to the same values
// (HPAControllerSettings.PodpilotArgs). It fails on what the PodAutoscaler
// cannot express, naming the field.
func PodAutoscalerFor(h *autoscalingv2.HorizontalPodAutoscaler, name, target string) (*podpilotv1alpha1.PodAutoscaler, error) {
	c := h.DeepCopy()
	c.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target}
	pa, err := hpaconv.Convert(c, nil)
	if err != nil {
		return nil, fmt.Errorf("PodAutoscaler for HPA %s: %w", h.Name, err)
	}
	pa.ObjectMeta = metav1.ObjectMeta{Name: name}
	return pa, nil
}
