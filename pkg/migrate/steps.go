package migrate

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
)

// deleteHPA is step (c): it deletes h, only if the HPA of that name is still h (its UID) with
// the spec that was converted. An HPA already gone is fine.
func (a *applier) deleteHPA(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler) error {
	hpas := a.c.Kube.AutoscalingV2().HorizontalPodAutoscalers(h.Namespace)
	cur, err := hpas.Get(ctx, h.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get HorizontalPodAutoscaler %s/%s: %w", h.Namespace, h.Name, err)
	case cur.UID != h.UID || !equality.Semantic.DeepEqual(cur.Spec, h.Spec):
		return fmt.Errorf("HorizontalPodAutoscaler %s/%s: %w; rerun to convert it again", h.Namespace, h.Name, ErrHPAChanged)
	}
	pre := metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}
	if err := hpas.Delete(ctx, h.Name, metav1.DeleteOptions{Preconditions: &pre}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete HorizontalPodAutoscaler %s/%s: %w", h.Namespace, h.Name, err)
	}
	return nil
}

// activate is step (d): it turns the PodAutoscaler's dryRun off.
func (a *applier) activate(ctx context.Context, namespace, name string) error {
	pas := a.c.Podpilot.AutoscalingV1alpha1().PodAutoscalers(namespace)
	err := retryOnConflict(func() error {
		pa, err := pas.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !pa.Spec.DryRun {
			return nil
		}
		pa.Spec.DryRun = false
		_, err = pas.Update(ctx, pa, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("turn dryRun off on PodAutoscaler %s/%s: %w", namespace, name, err)
	}
	return nil
}

// restoreHPA creates h again after (d) failed with cause, so that the target keeps an active
// autoscaler; the dry-run PodAutoscaler stays beside it for a rerun.
func (a *applier) restoreHPA(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, cause error) error {
	restored := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: h.Labels, Annotations: h.Annotations},
		Spec:       *h.Spec.DeepCopy(),
	}
	_, err := a.c.Kube.AutoscalingV2().HorizontalPodAutoscalers(h.Namespace).Create(ctx, restored, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("%w; restoring HorizontalPodAutoscaler %s/%s failed too, so the target has no active autoscaler until a rerun "+
			"turns the PodAutoscaler's dryRun off: %w", cause, h.Namespace, h.Name, err)
	}
	return fmt.Errorf("%w; HorizontalPodAutoscaler %s/%s restored, the PodAutoscaler stays in dryRun beside it", cause, h.Namespace, h.Name)
}

// finishInterrupted is step (d) for the hand-overs an interruption left after (c): dry-run
// PodAutoscalers written by migrate whose HPA is gone. It returns how many failed.
func (a *applier) finishInterrupted(ctx context.Context, handled []pair) int {
	list, err := a.c.Podpilot.AutoscalingV1alpha1().PodAutoscalers(a.o.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(a.out, "list PodAutoscalers to finish interrupted hand-overs: %v\n", err)
		return 1
	}
	seen := map[string]bool{}
	for _, p := range handled {
		seen[p.pa.Namespace+"/"+p.pa.Name] = true
	}
	failed := 0
	for i := range list.Items {
		pa := &list.Items[i]
		hpaName, ok := pa.Annotations[hpaconv.MigratedFromAnnotation]
		if !ok || !pa.Spec.DryRun || seen[pa.Namespace+"/"+pa.Name] {
			continue
		}
		if gone, err := a.hpaGone(ctx, pa.Namespace, hpaName); err != nil || !gone {
			failed += a.reportLeft(pa, hpaName, err)
			continue
		}
		if err := a.activate(ctx, pa.Namespace, pa.Name); err != nil {
			a.say(pa, "interrupted hand-over not finished: %v", err)
			failed++
			continue
		}
		a.say(pa, "interrupted hand-over finished: HorizontalPodAutoscaler %s already gone, PodAutoscaler active", hpaName)
	}
	return failed
}

func (a *applier) hpaGone(ctx context.Context, namespace, name string) (bool, error) {
	_, err := a.c.Kube.AutoscalingV2().HorizontalPodAutoscalers(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// reportLeft reports a dry-run PodAutoscaler whose HPA is there but was not handed over (it was
// refused, or is named otherwise), and counts it as unfinished only on an error.
func (a *applier) reportLeft(pa *podpilotv1alpha1.PodAutoscaler, hpaName string, err error) int {
	if err != nil {
		a.say(pa, "interrupted hand-over not finished: get HorizontalPodAutoscaler %s: %v", hpaName, err)
		return 1
	}
	return 0
}
