package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// ErrTargetTaken means another PodAutoscaler already scales the target: once active, both would
// refuse to scale it (AmbiguousScaleTarget), leaving it with no autoscaler.
var ErrTargetTaken = errors.New("another active PodAutoscaler scales the same target")

// targetKey names a PodAutoscaler's target: namespace, kind and name.
func targetKey(pa *podpilotv1alpha1.PodAutoscaler) string {
	return pa.Namespace + "/" + string(pa.Spec.ScaleTargetKind.Canonical()) + "/" + pa.Spec.ScaleTargetName
}

// refuseSharedTargets refuses every HPA whose target another of the HPAs scales too: upstream
// scales none of them (AmbiguousSelector), and their PodAutoscalers, once active, would all refuse
// (AmbiguousScaleTarget). It returns the other pairs and how many it refused.
func refuseSharedTargets(pairs []pair, stderr io.Writer) ([]pair, int) {
	byTarget := map[string][]string{}
	for _, p := range pairs {
		k := targetKey(p.pa)
		byTarget[k] = append(byTarget[k], p.hpa.Name)
	}
	var out []pair
	refused := 0
	for _, p := range pairs {
		names := byTarget[targetKey(p.pa)]
		if len(names) == 1 {
			out = append(out, p)
			continue
		}
		fmt.Fprintf(stderr, "refused: HorizontalPodAutoscaler %s/%s: spec.scaleTargetRef: %s/%s is the target of the HorizontalPodAutoscalers %s: "+
			"upstream scales it with none of them (AmbiguousSelector), and their PodAutoscalers would all refuse to (AmbiguousScaleTarget); keep one\n",
			p.hpa.Namespace, p.hpa.Name, p.hpa.Spec.ScaleTargetRef.Kind, p.hpa.Spec.ScaleTargetRef.Name, strings.Join(names, ", "))
		refused++
	}
	return out, refused
}

// activeRivals returns, by target, the active PodAutoscalers of the namespace (all when empty).
func (a *applier) activeRivals(ctx context.Context) (map[string][]string, error) {
	list, err := a.c.Podpilot.AutoscalingV1alpha1().PodAutoscalers(a.o.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list PodAutoscalers: %w", err)
	}
	out := map[string][]string{}
	for i := range list.Items {
		pa := &list.Items[i]
		if !pa.Spec.DryRun {
			out[targetKey(pa)] = append(out[targetKey(pa)], pa.Name)
		}
	}
	return out, nil
}

// checkTargetFree refuses to hand over want's target when another active PodAutoscaler scales it.
func checkTargetFree(rivals map[string][]string, want *podpilotv1alpha1.PodAutoscaler) error {
	for _, name := range rivals[targetKey(want)] {
		if name != want.Name {
			return fmt.Errorf("PodAutoscaler %s/%s scales %s %s: %w; delete it or set its spec.dryRun first",
				want.Namespace, name, want.Spec.ScaleTargetKind, want.Spec.ScaleTargetName, ErrTargetTaken)
		}
	}
	return nil
}
