package scenario

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// kind is an autoscaler kind the bench compares.
type kind string

const (
	kindHPA kind = "stock HPA"
	kindPA  kind = "PodAutoscaler"
)

var benchLabels = map[string]string{benchLabel: "1"}

// maxFor is the autoscalers' maxReplicas: maxReplicas, or room for a step that
// quadruples podsPerTarget.
func (e *Env) maxFor() int32 {
	return int32(max(maxReplicas, 4*e.podsPerTarget()))
}

func (e *Env) hpaFor(w workload) *autoscalingv2.HorizontalPodAutoscaler {
	h := framework.PodsMetricHPA(w.name, w.metricName(), targetPerPod, 1, e.maxFor())
	h.Labels = benchLabels
	return h
}

func (e *Env) podAutoscalerFor(w workload) *podpilotv1alpha1.PodAutoscaler {
	return &podpilotv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: w.name, Labels: benchLabels},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment,
			ScaleTargetName: w.name,
			MinReplicas:     ptr.To[int32](1),
			MaxReplicas:     e.maxFor(),
			CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{
				MetricName: w.metricName(), AverageValue: *resource.NewQuantity(targetPerPod, resource.DecimalSI),
			}},
		},
	}
}

// createAutoscalers creates one autoscaler of k per workload, bounded in parallel.
func (e *Env) createAutoscalers(ctx context.Context, k kind, ws []workload) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, w := range ws {
		g.Go(func() error {
			var err error
			if k == kindHPA {
				_, err = e.Cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(w.ns).Create(gctx, e.hpaFor(w), metav1.CreateOptions{})
			} else {
				_, err = e.PP.AutoscalingV1alpha1().PodAutoscalers(w.ns).Create(gctx, e.podAutoscalerFor(w), metav1.CreateOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create %s %s: %w", k, w.key(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// deleteAutoscalers deletes every bench autoscaler of k in namespaces.
func (e *Env) deleteAutoscalers(ctx context.Context, k kind, namespaces []string) error {
	opts := metav1.ListOptions{LabelSelector: benchLabel + "=1"}
	for _, ns := range namespaces {
		var err error
		if k == kindHPA {
			err = e.Cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, opts)
		} else {
			err = e.PP.AutoscalingV1alpha1().PodAutoscalers(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, opts)
		}
		if err != nil {
			return fmt.Errorf("delete %ss in %s: %w", k, ns, err)
		}
	}
	return nil
}

// activeAutoscalers counts the autoscalers of k in namespaces that read
// their metric: an HPA with a current metric value, a PodAutoscaler with
// ScalingActive=True.
func (e *Env) activeAutoscalers(ctx context.Context, k kind, namespaces []string) (int, error) {
	opts := metav1.ListOptions{LabelSelector: benchLabel + "=1"}
	active := 0
	for _, ns := range namespaces {
		if k == kindHPA {
			l, err := e.Cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, opts)
			if err != nil {
				return 0, fmt.Errorf("list HPAs in %s: %w", ns, err)
			}
			for _, h := range l.Items {
				if len(h.Status.CurrentMetrics) > 0 && hpaActive(&h) {
					active++
				}
			}
			continue
		}
		l, err := e.PP.AutoscalingV1alpha1().PodAutoscalers(ns).List(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("list PodAutoscalers in %s: %w", ns, err)
		}
		for _, pa := range l.Items {
			if meta.IsStatusConditionTrue(pa.Status.Conditions, "ScalingActive") {
				active++
			}
		}
	}
	return active, nil
}

func hpaActive(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, c := range h.Status.Conditions {
		if c.Type == autoscalingv2.ScalingActive {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// failedGetPodsMetric sums the counts of FailedGetPodsMetric events in namespaces.
func (e *Env) failedGetPodsMetric(ctx context.Context, namespaces []string) (int, error) {
	total := 0
	for _, ns := range namespaces {
		l, err := e.Cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedGetPodsMetric"})
		if err != nil {
			return 0, fmt.Errorf("list events in %s: %w", ns, err)
		}
		for _, ev := range l.Items {
			total += int(max(ev.Count, 1))
		}
	}
	return total, nil
}
