package controller

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// Reasons of the SelectorOverlap condition and its event.
const (
	// ReasonForeignPodsIgnored is the SelectorOverlap reason (condition True, and a Warning event)
	// when pods match the target's selector without being the target's own.
	ReasonForeignPodsIgnored = "ForeignPodsIgnored"
	// ReasonOwnPodsOnly is the SelectorOverlap reason (condition False) when every pod matching
	// the target's selector is the target's own.
	ReasonOwnPodsOnly = "OwnPodsOnly"
)

// actionSelectPods is the action of the SelectorOverlap event.
const actionSelectPods = "SelectPods"

// controllerUIDIndex indexes ReplicaSets by the UID of their controller (a Deployment), so that
// a Deployment's ReplicaSets are found without listing the namespace's.
const controllerUIDIndex = "podpilot.io/controller-uid"

func controllerUIDIndexFunc(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// addIndex adds the index name to inf unless it has it already (another reader of the shared
// informer may have added it).
func addIndex(inf cache.SharedIndexInformer, name string, f cache.IndexFunc) error {
	if _, ok := inf.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{name: f}); err != nil {
		return fmt.Errorf("add index %s: %w", name, err)
	}
	return nil
}

// targetPods are the pods matching a target's selector, split by ownership.
type targetPods struct {
	// own are the pods whose controller is the target (StatefulSet) or one of its ReplicaSets
	// (Deployment).
	own []*podcache.Pod
	// foreign are the other matching pods: another workload's, or nobody's.
	foreign []*podcache.Pod
}

// podsOfTarget returns the pods matching t's selector in namespace, split into t's own and the
// others, by the pods' controller references: Deployment → ReplicaSet → Pod, StatefulSet → Pod.
// Everything comes from the informer caches: one index lookup for the Deployment's ReplicaSets
// and one pass over the matching pods.
func (c *Controller) podsOfTarget(namespace string, t target) (targetPods, error) {
	pods, err := c.selectPods(namespace, t.selector)
	if err != nil {
		return targetPods{}, err
	}
	owners := []types.UID{t.uid}
	if t.kind == podpilotv1alpha1.ScaleTargetDeployment {
		owners, err = c.replicaSetsOf(t.uid)
		if err != nil {
			return targetPods{}, err
		}
	}
	return splitByOwner(pods, owners), nil
}

// replicaSetsOf returns the UIDs of the ReplicaSets that the Deployment with uid controls (a
// handful: the current one and the revision history).
func (c *Controller) replicaSetsOf(uid types.UID) ([]types.UID, error) {
	objs, err := c.replicaSetIndexer.ByIndex(controllerUIDIndex, string(uid))
	if err != nil {
		return nil, fmt.Errorf("look up the ReplicaSets of deployment %s: %w", uid, err)
	}
	out := make([]types.UID, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			out = append(out, m.GetUID())
		}
	}
	return out, nil
}

// splitByOwner splits pods into those whose controller's UID is among owners and the others.
// When every pod is owned, the common case, own is pods itself.
func splitByOwner(pods []*podcache.Pod, owners []types.UID) targetPods {
	owned := func(p *podcache.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref != nil && slices.Contains(owners, ref.UID)
	}
	first := slices.IndexFunc(pods, func(p *podcache.Pod) bool { return !owned(p) })
	if first < 0 {
		return targetPods{own: pods}
	}
	out := targetPods{own: slices.Clip(pods[:first])}
	for _, p := range pods[first:] {
		if owned(p) {
			out.own = append(out.own, p)
			continue
		}
		out.foreign = append(out.foreign, p)
	}
	return out
}

// ownerOf names the workload that controls p, e.g. "Deployment/api" for a pod of one of its
// ReplicaSets, "ReplicaSet/api-5d8f" for a ReplicaSet without a controller (or not cached),
// "no owner" for an orphan.
func (c *Controller) ownerOf(p *podcache.Pod) string {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return "no owner"
	}
	if ref.Kind == "ReplicaSet" {
		if rs, err := c.replicaSetLister.ReplicaSets(p.Namespace).Get(ref.Name); err == nil && rs.UID == ref.UID {
			if up := metav1.GetControllerOfNoCopy(rs); up != nil {
				return up.Kind + "/" + up.Name
			}
		}
	}
	return ref.Kind + "/" + ref.Name
}

// reportOverlap sets SelectorOverlap from p: True with ReasonForeignPodsIgnored, naming how many
// pods were left out and one example owner, or False. The Warning event goes out only when the
// condition's status or message changes from old's, not every round.
func (c *Controller) reportOverlap(old, pa *podpilotv1alpha1.PodAutoscaler, t target, p targetPods, now time.Time) {
	if len(p.foreign) == 0 {
		status.SetCondition(pa, podpilotv1alpha1.ConditionSelectorOverlap, false, ReasonOwnPodsOnly,
			"every pod matching the scale target's selector is its own", now)
		return
	}
	msg := overlapMessage(t.reference, len(p.own), len(p.foreign), c.ownerOf(p.foreign[0]))
	status.SetCondition(pa, podpilotv1alpha1.ConditionSelectorOverlap, true, ReasonForeignPodsIgnored, msg, now)
	prev := meta.FindStatusCondition(old.Status.Conditions, podpilotv1alpha1.ConditionSelectorOverlap)
	if prev == nil || prev.Status != metav1.ConditionTrue || prev.Message != msg {
		c.recorder.Eventf(pa, nil, corev1.EventTypeWarning, ReasonForeignPodsIgnored, actionSelectPods, "%s", msg)
	}
}

// overlapMessage is the SelectorOverlap message for foreign pods left out of ref's own.
func overlapMessage(ref string, own, foreign int, example string) string {
	pods := "pods match"
	if foreign == 1 {
		pods = "pod matches"
	}
	return fmt.Sprintf("%d %s the selector of %s without being its own (e.g. owned by %s); they are ignored, "+
		"the metrics are averaged over its %d own pods", foreign, pods, ref, example, own)
}
