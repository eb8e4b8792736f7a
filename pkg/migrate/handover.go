package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
)

// The hand-over of one target, in this order, each step safe to interrupt:
//
//	(a) create or update the PodAutoscaler with dryRun true beside the HPA. A dry-run
//	    PodAutoscaler writes no scale, and the controller exempts it from the two-autoscaler
//	    refusal (conflict.go), so the HPA alone scales, and the PodAutoscaler's status shows what
//	    it would decide;
//	(b) wait, at most --apply-wait, for a decision for the current spec (see decided); without
//	    one the target stays with its HPA;
//	(c) delete the HPA, only if its spec is still the one converted (and it is the same object);
//	(d) set dryRun false. Should that fail, the HPA is created again, so that the target is left
//	    with the autoscaler it had.
//
// A rerun finds each target in one of these states and finishes: an HPA beside a dry-run
// PodAutoscaler written by migrate repeats (a) to (d); a dry-run PodAutoscaler written by migrate
// without its HPA (interrupted after c) gets (d) only, before any other target is handed over,
// since that target has no active autoscaler until then. An active PodAutoscaler beside an HPA is
// refused (the controller's refusal keeps the PodAutoscaler from scaling meanwhile), and so is a
// PodAutoscaler that migrate did not write.

// Errors of a hand-over that leave the target as it was.
var (
	// ErrNotMigrated means a PodAutoscaler of the HPA's name exists that migrate did not write.
	ErrNotMigrated = errors.New("a PodAutoscaler of that name exists that podpilot migrate did not write")
	// ErrActiveBesideHPA means the PodAutoscaler is already active while the HPA exists.
	ErrActiveBesideHPA = errors.New("the PodAutoscaler is active beside the HorizontalPodAutoscaler")
	// ErrNoDecision means the PodAutoscaler showed no decision within --apply-wait.
	ErrNoDecision = errors.New("the PodAutoscaler showed no dry-run decision in time")
	// ErrHPAChanged means the HPA changed since it was read and converted.
	ErrHPAChanged = errors.New("the HorizontalPodAutoscaler changed since it was converted")
)

// applier hands targets over in one cluster.
type applier struct {
	o   *Options
	c   *Clients
	out io.Writer
}

func newApplier(o *Options, c *Clients, out io.Writer) *applier {
	return &applier{o: o, c: c, out: out}
}

// applyAll first finishes the hand-overs an interruption left after (c), since those targets
// have no active autoscaler until it does, then hands over each pair. It returns how many did not
// finish. Step (a) runs for every target first, so that the PodAutoscalers make their first
// decisions in their own rounds, together, while each is awaited in turn: a fleet waits about
// one sync period, not one per target.
func (a *applier) applyAll(ctx context.Context, pairs []pair) int {
	failed := a.finishInterrupted(ctx, pairs)
	rivals, err := a.activeRivals(ctx)
	if err != nil {
		fmt.Fprintf(a.out, "no hand-over: %v\n", err)
		return failed + len(pairs)
	}
	var ready []pair
	for _, p := range pairs {
		err := checkTargetFree(rivals, p.pa)
		if err == nil {
			err = a.ensureDryRun(ctx, p.hpa, p.pa)
		}
		if err != nil {
			a.say(p.pa, "not handed over: %v", err)
			failed++
			continue
		}
		ready = append(ready, p)
	}
	for _, p := range ready {
		if err := a.handOver(ctx, p.hpa, p.pa); err != nil {
			a.say(p.pa, "not handed over: %v", err)
			failed++
		}
	}
	return failed
}

// handOver runs steps (b) to (d) for h and its PodAutoscaler want, which step (a) wrote.
func (a *applier) handOver(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, want *podpilotv1alpha1.PodAutoscaler) error {
	decision, err := a.waitForDecision(ctx, want.Namespace, want.Name)
	if err != nil {
		return err
	}
	a.say(want, "dry-run decision: %s", decision)
	if err := a.deleteHPA(ctx, h); err != nil {
		return err
	}
	a.say(want, "HorizontalPodAutoscaler deleted")
	if err := a.activate(ctx, want.Namespace, want.Name); err != nil {
		return a.restoreHPA(ctx, h, err)
	}
	a.say(want, "PodAutoscaler active")
	return nil
}

// ensureDryRun is step (a): it creates want in dryRun, or brings a dry-run PodAutoscaler that
// migrate wrote to want's spec.
func (a *applier) ensureDryRun(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, want *podpilotv1alpha1.PodAutoscaler) error {
	pas := a.c.Podpilot.AutoscalingV1alpha1().PodAutoscalers(want.Namespace)
	want = want.DeepCopy()
	want.Spec.DryRun = true
	cur, err := pas.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := pas.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PodAutoscaler %s/%s in dryRun: %w", want.Namespace, want.Name, err)
		}
		a.say(want, "PodAutoscaler created in dryRun beside HorizontalPodAutoscaler %s", h.Name)
		return nil
	case err != nil:
		return fmt.Errorf("get PodAutoscaler %s/%s: %w", want.Namespace, want.Name, err)
	case cur.Annotations[hpaconv.MigratedFromAnnotation] != h.Name:
		return fmt.Errorf("PodAutoscaler %s/%s (no %s: %s annotation): %w", cur.Namespace, cur.Name, hpaconv.MigratedFromAnnotation, h.Name, ErrNotMigrated)
	case !cur.Spec.DryRun:
		return fmt.Errorf("PodAutoscaler %s/%s beside HorizontalPodAutoscaler %s: %w; it refuses to scale (AmbiguousScaleTarget) "+
			"until one of them goes: delete the HPA, or set the PodAutoscaler's spec.dryRun and rerun", cur.Namespace, cur.Name, h.Name, ErrActiveBesideHPA)
	case specEqual(cur.Spec, want.Spec):
		a.say(want, "PodAutoscaler already in dryRun beside HorizontalPodAutoscaler %s", h.Name)
		return nil
	}
	cur.Spec = want.Spec
	if _, err := pas.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update PodAutoscaler %s/%s in dryRun: %w", cur.Namespace, cur.Name, err)
	}
	a.say(want, "PodAutoscaler updated in dryRun beside HorizontalPodAutoscaler %s", h.Name)
	return nil
}

// specEqual reports whether a and b are the same spec once the CRD's default of minReplicas,
// which the API server writes in, is applied to both.
func specEqual(a, b podpilotv1alpha1.PodAutoscalerSpec) bool {
	for _, s := range []*podpilotv1alpha1.PodAutoscalerSpec{&a, &b} {
		min := s.MinReplicasOrDefault()
		s.MinReplicas = &min
	}
	return equality.Semantic.DeepEqual(a, b)
}

// waitForDecision is step (b): it polls the PodAutoscaler until decided says it has decided, at
// most --apply-wait, and returns the decision.
func (a *applier) waitForDecision(ctx context.Context, namespace, name string) (string, error) {
	pas := a.c.Podpilot.AutoscalingV1alpha1().PodAutoscalers(namespace)
	var last, decision string
	err := wait.PollUntilContextTimeout(ctx, a.o.PollInterval, a.o.ApplyWait, true, func(ctx context.Context) (bool, error) {
		pa, err := pas.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil //nolint:nilerr // a failed read is retried until the wait ends
		}
		var ok bool
		decision, ok = decided(pa)
		last = decision
		return ok, nil
	})
	if err != nil {
		return "", fmt.Errorf("PodAutoscaler %s/%s after %s: %s: %w", namespace, name, a.o.ApplyWait, last, ErrNoDecision)
	}
	return decision, nil
}

// decided reports whether pa's status shows a dry-run decision for its current spec with its
// metrics read, and says what it decided, or what it lacks.
func decided(pa *podpilotv1alpha1.PodAutoscaler) (string, bool) {
	st := pa.Status
	switch {
	case !pa.Spec.DryRun:
		return "spec.dryRun was turned off meanwhile", false
	case st.ObservedGeneration != pa.Generation:
		return fmt.Sprintf("status is for generation %d, the spec is at %d (is podpilot's autoscaler running?)", st.ObservedGeneration, pa.Generation), false
	case st.Mode != podpilotv1alpha1.DryRunMode || st.LastDecision == nil:
		return "no dry-run decision in status yet", false
	}
	active := metaCondition(pa, podpilotv1alpha1.ConditionScalingActive)
	if active == nil || active.Status != metav1.ConditionTrue {
		if active == nil {
			return "no ScalingActive condition yet", false
		}
		return fmt.Sprintf("ScalingActive is %s (%s): %s", active.Status, active.Reason, active.Message), false
	}
	d := st.LastDecision
	return fmt.Sprintf("%d -> %d replicas (%s), targets %s", d.FromReplicas, d.ToReplicas, d.Winner, st.Targets), true
}

func metaCondition(pa *podpilotv1alpha1.PodAutoscaler, t string) *metav1.Condition {
	for i := range pa.Status.Conditions {
		if pa.Status.Conditions[i].Type == t {
			return &pa.Status.Conditions[i]
		}
	}
	return nil
}

func (a *applier) say(pa *podpilotv1alpha1.PodAutoscaler, format string, args ...any) {
	fmt.Fprintf(a.out, "%s/%s: %s\n", pa.Namespace, pa.Name, fmt.Sprintf(format, args...))
}

// retryOnConflict runs fn again when it fails on a conflict, as client-go's default.
func retryOnConflict(fn func() error) error { return retry.RetryOnConflict(retry.DefaultRetry, fn) }
