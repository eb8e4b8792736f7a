package controller

import (
	"context"
	"errors"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// ErrNoSelector means the scale target has no pod selector, so its pods cannot be found.
var ErrNoSelector = errors.New("scale target has no selector")

// errStaleTarget means the scale subresource disagrees with the cached target, so the decision
// was made on stale data and the round is retried.
var errStaleTarget = errors.New("scale changed since the cache was read")

// target is the resolved scale target of a PodAutoscaler.
type target struct {
	// kind is Deployment or StatefulSet.
	kind podpilotv1alpha1.ScaleTargetKind
	// reference is "Kind/name", for status.reference.
	reference string
	// specReplicas and statusReplicas are the target's spec.replicas and status.replicas.
	specReplicas, statusReplicas int32
	// selector selects the target's pods.
	selector labels.Selector
}

// scaler reads and writes the scale subresource of one kind of workload.
type scaler interface {
	GetScale(ctx context.Context, name string, opts metav1.GetOptions) (*autoscalingv1.Scale, error)
	UpdateScale(ctx context.Context, name string, scale *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, error)
}

// resolveTarget reads pa's scale target from the listers.
func (c *Controller) resolveTarget(pa *podpilotv1alpha1.PodAutoscaler) (target, error) {
	ref, err := pa.TargetReference()
	if err != nil {
		return target{}, err
	}
	t := target{kind: pa.Spec.ScaleTargetKind.Canonical(), reference: ref}
	ns, name := pa.Namespace, pa.Spec.ScaleTargetName
	var replicas *int32
	var selector *metav1.LabelSelector
	switch t.kind {
	case podpilotv1alpha1.ScaleTargetDeployment:
		d, err := c.deploymentLister.Deployments(ns).Get(name)
		if err != nil {
			return target{}, fmt.Errorf("get scale target %s in namespace %s: %w", ref, ns, err)
		}
		replicas, selector, t.statusReplicas = d.Spec.Replicas, d.Spec.Selector, d.Status.Replicas
	case podpilotv1alpha1.ScaleTargetStatefulSet:
		s, err := c.statefulSetLister.StatefulSets(ns).Get(name)
		if err != nil {
			return target{}, fmt.Errorf("get scale target %s in namespace %s: %w", ref, ns, err)
		}
		replicas, selector, t.statusReplicas = s.Spec.Replicas, s.Spec.Selector, s.Status.Replicas
	}
	t.specReplicas = 1
	if replicas != nil {
		t.specReplicas = *replicas
	}
	if selector == nil || (len(selector.MatchLabels) == 0 && len(selector.MatchExpressions) == 0) {
		return target{}, fmt.Errorf("%s in namespace %s: %w", ref, ns, ErrNoSelector)
	}
	if t.selector, err = metav1.LabelSelectorAsSelector(selector); err != nil {
		return target{}, fmt.Errorf("selector of scale target %s in namespace %s: %w", ref, ns, err)
	}
	return t, nil
}

// scaler returns the scale subresource client of t's kind.
func (c *Controller) scaler(t target, namespace string) scaler {
	if t.kind == podpilotv1alpha1.ScaleTargetStatefulSet {
		return c.kube.AppsV1().StatefulSets(namespace)
	}
	return c.kube.AppsV1().Deployments(namespace)
}

// rescale sets the replicas of pa's target through its scale subresource. It returns
// errStaleTarget, without writing, when the scale no longer has the replicas the decision saw.
func (c *Controller) rescale(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, t target, desired int32) error {
	s := c.scaler(t, pa.Namespace)
	name := pa.Spec.ScaleTargetName
	scale, err := s.GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get scale of %s in namespace %s: %w", t.reference, pa.Namespace, err)
	}
	if scale.Spec.Replicas != t.specReplicas {
		return fmt.Errorf("%s in namespace %s has %d replicas, the cache %d: %w",
			t.reference, pa.Namespace, scale.Spec.Replicas, t.specReplicas, errStaleTarget)
	}
	scale.Spec.Replicas = desired
	if _, err := s.UpdateScale(ctx, name, scale, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update scale of %s in namespace %s to %d: %w", t.reference, pa.Namespace, desired, err)
	}
	return nil
}
