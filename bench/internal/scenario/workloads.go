package scenario

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// parallel bounds concurrent object writes of the harness.
const parallel = 16

// workload is one bench Deployment.
type workload struct {
	ns, name string
	// metric is the custom metric its autoscaler follows; empty means loadMetric.
	metric string
}

// metricName is the custom metric w's autoscaler follows.
func (w workload) metricName() string {
	if w.metric == "" {
		return loadMetric
	}
	return w.metric
}

func (w workload) key() string { return w.ns + "/" + w.name }

// benchWorkloads returns the first n of the scenario b/c Deployments, spread
// round-robin over the namespaces.
func (e *Env) benchWorkloads(n int) []workload {
	out := make([]workload, n)
	for i := range out {
		out[i] = workload{ns: e.namespace(i % e.Cfg.Namespaces), name: fmt.Sprintf("w-%05d", i)}
	}
	return out
}

func (e *Env) namespace(i int) string { return fmt.Sprintf("%sn%02d", benchNSPrefix, i) }

// ensureNamespaces creates the namespaces, tolerating existing ones.
func (e *Env) ensureNamespaces(ctx context.Context, names ...string) error {
	for _, n := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{benchLabel: "1"}}}
		if _, err := e.Cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", n, err)
		}
	}
	return nil
}

// ensureDeployments creates the workloads that do not exist yet with
// replicas pods each (at most parallel creations at a time) and waits until
// all their pods run.
func (e *Env) ensureDeployments(ctx context.Context, ws []workload, replicas int32) error {
	if err := e.createDeployments(ctx, ws, replicas); err != nil {
		return err
	}
	return e.waitRunning(ctx, ws, replicas)
}

// createDeployments creates the workloads that do not exist yet with
// replicas pods each, at most parallel creations at a time.
func (e *Env) createDeployments(ctx context.Context, ws []workload, replicas int32) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, w := range ws {
		g.Go(func() error {
			d := e.Cluster.Deployment(w.name, replicas)
			d.Labels = map[string]string{benchLabel: "1"}
			d.Spec.Template.Labels[benchLabel] = "1"
			d.Spec.Template.Spec.TerminationGracePeriodSeconds = new(int64)
			_, err := e.Cluster.Client.AppsV1().Deployments(w.ns).Create(gctx, d, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create deployment %s: %w", w.key(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// scaleTo sets every workload's replicas (parallel, bounded) and waits until
// exactly that many pods of each run.
func (e *Env) scaleTo(ctx context.Context, ws []workload, replicas int32) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, w := range ws {
		g.Go(func() error {
			// The Deployment controller writes the object while it scales: retry conflicts.
			return retry.RetryOnConflict(retry.DefaultRetry, func() error { return e.scaleOne(gctx, w, replicas) })
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return e.waitRunning(ctx, ws, replicas)
}

// scaleOne sets the workload's replicas unless it has them.
func (e *Env) scaleOne(ctx context.Context, w workload, replicas int32) error {
	cur, err := e.Cluster.Client.AppsV1().Deployments(w.ns).GetScale(ctx, w.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get scale of %s: %w", w.key(), err)
	}
	if cur.Spec.Replicas == replicas {
		return nil
	}
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: w.ns, ResourceVersion: cur.ResourceVersion},
		Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if _, err := e.Cluster.Client.AppsV1().Deployments(w.ns).UpdateScale(ctx, w.name, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale %s: %w", w.key(), err)
	}
	return nil
}

// waitRunning waits until each workload has exactly replicas running pods,
// allowing a minute plus 150 s per 1000 pods: kube-controller-manager's ReplicaSet controller,
// at its default 20 QPS, creates about 9 pods a second here (a pod create plus status writes).
func (e *Env) waitRunning(ctx context.Context, ws []workload, replicas int32) error {
	timeout := time.Minute + time.Duration(len(ws)*int(replicas))*150*time.Millisecond
	what := fmt.Sprintf("%d Deployments with %d running pods each", len(ws), replicas)
	return framework.Poll(ctx, timeout, what, func(context.Context) (bool, string, error) {
		off := 0
		for _, w := range ws {
			if len(e.Watch.RunningPods(w.ns, w.name)) != int(replicas) {
				off++
			}
		}
		return off == 0, fmt.Sprintf("%d not there yet (%d bench pods exist)", off, e.Watch.PodCount()), nil
	})
}
