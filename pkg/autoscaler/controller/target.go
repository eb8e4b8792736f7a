package controller

import (
	"context"
	"errors"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// ErrNoSelector means the scale target has no pod selector, so its pods cannot be found.
var ErrNoSelector = errors.New("scale target has no selector")

// errStaleTarget means the target changed since the cache was read (the scale update was refused
// with a conflict), so the decision was made on stale data and the round is retried soon.
var errStaleTarget = errors.New("scale target changed since the cache was read")

// target is the resolved scale target of a PodAutoscaler.
type target struct {
	// kind is Deployment or StatefulSet.
	kind podpilotv1alpha1.ScaleTargetKind
	// reference is "Kind/name", for status.reference.
	reference string
	// uid is the workload's, which its pods' (StatefulSet) or ReplicaSets' (Deployment)
	// controller references name.
	uid types.UID
	// specReplicas and statusReplicas are the target's spec.replicas and status.replicas.
	specReplicas, statusReplicas int32
	// resourceVersion is the cached workload's, which its scale subresource shares.
	resourceVersion string
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
		replicas, selector, t.statusReplicas, t.resourceVersion, t.uid = d.Spec.Replicas, d.Spec.Selector, d.Status.Replicas, d.ResourceVersion, d.UID
	case podpilotv1alpha1.ScaleTargetStatefulSet:
		s, err := c.statefulSetLister.StatefulSets(ns).Get(name)
		if err != nil {
			return target{}, fmt.Errorf("get scale target %s in namespace %s: %w", ref, ns, err)
		}
		replicas, selector, t.statusReplicas, t.resourceVersion, t.uid = s.Spec.Replicas, s.Spec.Selector, s.Status.Replicas, s.ResourceVersion, s.UID
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

// rescale sets the replicas of pa's target through its scale subresource with one update
// conditioned on the cached workload's resourceVersion: the informer cache is authoritative for
// spec.replicas, so no read precedes the write. A conflict means the cache was stale; it returns
// errStaleTarget, having changed nothing, for a quick retry on fresh data.
func (c *Controller) rescale(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, t target, desired int32) error {
	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: pa.Spec.ScaleTargetName, Namespace: pa.Namespace, ResourceVersion: t.resourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: desired},
	}
	_, err := c.scaler(t, pa.Namespace).UpdateScale(ctx, scale.Name, scale, metav1.UpdateOptions{})
	switch {
	case apierrors.IsConflict(err):
		return fmt.Errorf("update scale of %s in namespace %s to %d: %w: %w", t.reference, pa.Namespace, desired, errStaleTarget, err)
	case err != nil:
		return fmt.Errorf("update scale of %s in namespace %s to %d: %w", t.reference, pa.Namespace, desired, err)
	}
	return nil
}
