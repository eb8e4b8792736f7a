package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
	"github.com/podpilot/podpilot/pkg/autoscaler/telemetry"
)

// ReasonAmbiguousScaleTarget is the ScalingActive reason (condition False) and the event of a
// PodAutoscaler whose target another autoscaler (a HorizontalPodAutoscaler or another
// PodAutoscaler) scales too; upstream's equivalent for HPAs is AmbiguousSelector.
const ReasonAmbiguousScaleTarget = "AmbiguousScaleTarget"

// ErrAmbiguousScaleTarget means another autoscaler targets the same workload, so podpilot leaves
// the workload's replicas alone.
var ErrAmbiguousScaleTarget = errors.New("scale target has more than one autoscaler")

// actionRefuse is the action of the AmbiguousScaleTarget event.
const actionRefuse = "Refuse"

// scaleTargetIndex indexes HorizontalPodAutoscalers and PodAutoscalers by their scale target,
// "namespace/group/Kind/name", so that a round finds the autoscalers of its target in one lookup
// per informer, whatever the number of autoscalers in the cluster.
const scaleTargetIndex = "podpilot.io/scale-target"

func scaleTargetKey(namespace string, gk schema.GroupKind, name string) string {
	return namespace + "/" + gk.Group + "/" + gk.Kind + "/" + name
}

func hpaScaleTargetIndexFunc(obj any) ([]string, error) {
	h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil, nil
	}
	ref := h.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil //nolint:nilerr // an HPA with an unparsable target scales nothing
	}
	return []string{scaleTargetKey(h.Namespace, schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, ref.Name)}, nil
}

func paScaleTargetIndexFunc(obj any) ([]string, error) {
	pa, ok := obj.(*podpilotv1alpha1.PodAutoscaler)
	if !ok {
		return nil, nil
	}
	gk, err := pa.Spec.ScaleTargetKind.GroupKind()
	if err != nil {
		return nil, nil //nolint:nilerr // admission rejects such kinds; nothing to index
	}
	return []string{scaleTargetKey(pa.Namespace, gk, pa.Spec.ScaleTargetName)}, nil
}

// otherAutoscalers returns the other autoscalers that scale pa's target (see rivals). A dry-run
// PodAutoscaler writes no scale, so it is exempt: neither blocked by the other autoscalers of its
// target nor blocking them.
func (c *Controller) otherAutoscalers(pa *podpilotv1alpha1.PodAutoscaler) ([]rival, error) {
	gk, err := pa.Spec.ScaleTargetKind.GroupKind()
	if err != nil {
		return nil, fmt.Errorf("scale target of PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	key := scaleTargetKey(pa.Namespace, gk, pa.Spec.ScaleTargetName)
	hpaObjs, err := c.hpaIndexer.ByIndex(scaleTargetIndex, key)
	if err != nil {
		return nil, fmt.Errorf("look up the HorizontalPodAutoscalers of %s: %w", key, err)
	}
	paObjs, err := c.paIndexer.ByIndex(scaleTargetIndex, key)
	if err != nil {
		return nil, fmt.Errorf("look up the PodAutoscalers of %s: %w", key, err)
	}
	if len(hpaObjs) == 0 && len(paObjs) <= 1 {
		return nil, nil // pa alone: the common case
	}
	hpas := make([]*autoscalingv2.HorizontalPodAutoscaler, 0, len(hpaObjs))
	for _, o := range hpaObjs {
		if h, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
			hpas = append(hpas, h)
		}
	}
	pas := make([]*podpilotv1alpha1.PodAutoscaler, 0, len(paObjs))
	for _, o := range paObjs {
		if p, ok := o.(*podpilotv1alpha1.PodAutoscaler); ok {
			pas = append(pas, p)
		}
	}
	return rivals(pa, hpas, pas, dryRun), nil
}

// rival is another autoscaler of a PodAutoscaler's target.
type rival struct {
	// name is "Kind/name", e.g. HorizontalPodAutoscaler/web.
	name string
	// obj is the autoscaler, the related object of the event.
	obj runtime.Object
}

// rivals returns the autoscalers among hpas and pas, all of pa's target, that pa must not
// fight, sorted by name: every HorizontalPodAutoscaler, and every other PodAutoscaler that
// exempt does not exempt. An exempt pa has none. Both PodAutoscalers of a pair see each other,
// so both refuse, whichever syncs first (as two upstream HPAs both report AmbiguousSelector).
func rivals(pa *podpilotv1alpha1.PodAutoscaler, hpas []*autoscalingv2.HorizontalPodAutoscaler, pas []*podpilotv1alpha1.PodAutoscaler,
	exempt func(*podpilotv1alpha1.PodAutoscaler) bool) []rival {
	if exempt(pa) {
		return nil
	}
	var out []rival
	for _, h := range hpas {
		out = append(out, rival{name: "HorizontalPodAutoscaler/" + h.Name, obj: h})
	}
	for _, p := range pas {
		if p.Name == pa.Name || exempt(p) {
			continue
		}
		out = append(out, rival{name: "PodAutoscaler/" + p.Name, obj: p})
	}
	slices.SortFunc(out, func(a, b rival) int { return strings.Compare(a.name, b.name) })
	return out
}

// refuseIfAmbiguous ends the round of pa, before any metric is read or scale written, when
// another autoscaler scales its target too: it records why (see refuseAmbiguous), writes the
// status and reports true. It reports false, having changed nothing, when pa's target is its own.
func (c *Controller) refuseIfAmbiguous(ctx context.Context, tm *term, old, pa *podpilotv1alpha1.PodAutoscaler, t target,
	rec *telemetry.Reconcile, now time.Time) (bool, error) {
	others, err := c.otherAutoscalers(pa)
	if err != nil {
		return true, err
	}
	if len(others) == 0 {
		return false, nil
	}
	rec.Failed(ErrAmbiguousScaleTarget)
	c.refuseAmbiguous(old, pa, t, others, now)
	return true, c.updateStatus(ctx, tm, old, pa, false)
}

// refuseAmbiguous records that pa leaves its target alone this round because others scale it
// too: ScalingActive False with ReasonAmbiguousScaleTarget naming them, the target's current
// replicas, and no metrics. The Warning event goes out when the condition changes from old's,
// not every round.
func (c *Controller) refuseAmbiguous(old, pa *podpilotv1alpha1.PodAutoscaler, t target, others []rival, now time.Time) {
	names := make([]string, 0, len(others))
	for _, r := range others {
		names = append(names, r.name)
	}
	msg := fmt.Sprintf("%s is also the scale target of %s; podpilot does not scale it while more than one autoscaler does",
		t.reference, strings.Join(names, ", "))
	status.SetCondition(pa, podpilotv1alpha1.ConditionScalingActive, false, ReasonAmbiguousScaleTarget, msg, now)
	prev := meta.FindStatusCondition(old.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
	if prev == nil || prev.Reason != ReasonAmbiguousScaleTarget || prev.Message != msg {
		// The first rival is the event's related object: events/v1 aggregates events that differ
		// only in their note, so a new rival makes a new event.
		c.recorder.Eventf(pa, others[0].obj, corev1.EventTypeWarning, ReasonAmbiguousScaleTarget, actionRefuse, "%s", msg)
	}
	pa.Status.CurrentReplicas = t.specReplicas
	pa.Status.CurrentMetrics = nil
	pa.Status.Targets = status.TargetsOf(pa, nil)
}
