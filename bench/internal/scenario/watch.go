package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	ppinformers "github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
)

// Watch follows the bench's pods, Deployments and PodAutoscalers through
// informers: which pods of a Deployment run, when a Deployment's
// spec.replicas changed, and when a PodAutoscaler's status was written.
type Watch struct {
	pods cache.Indexer

	mu sync.Mutex
	// changes are the times each Deployment's (ns/name) spec.replicas changed.
	changes map[string][]time.Time
	// paWrites are the times of PodAutoscaler updates.
	paWrites []time.Time
}

const byApp = "app"

// StartWatch starts the informers and waits for their caches.
func StartWatch(ctx context.Context, client kubernetes.Interface, pp versioned.Interface) (*Watch, error) {
	w := &Watch{changes: map[string][]time.Time{}}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = benchLabel + "=1" }))
	podInf := f.Core().V1().Pods().Informer()
	if err := podInf.AddIndexers(cache.Indexers{byApp: func(obj any) ([]string, error) {
		p := obj.(*corev1.Pod)
		return []string{p.Namespace + "/" + p.Labels["app"]}, nil
	}}); err != nil {
		return nil, fmt.Errorf("index pods: %w", err)
	}
	w.pods = podInf.GetIndexer()
	if _, err := f.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*appsv1.Deployment), newObj.(*appsv1.Deployment)
			if o.Spec.Replicas != nil && n.Spec.Replicas != nil && *o.Spec.Replicas != *n.Spec.Replicas {
				w.mu.Lock()
				w.changes[n.Namespace+"/"+n.Name] = append(w.changes[n.Namespace+"/"+n.Name], time.Now())
				w.mu.Unlock()
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("watch deployments: %w", err)
	}
	pf := ppinformers.NewSharedInformerFactory(pp, 0)
	if _, err := pf.Autoscaling().V1alpha1().PodAutoscalers().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*podpilotv1alpha1.PodAutoscaler), newObj.(*podpilotv1alpha1.PodAutoscaler)
			if o.ResourceVersion != n.ResourceVersion {
				w.mu.Lock()
				w.paWrites = append(w.paWrites, time.Now())
				w.mu.Unlock()
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("watch podautoscalers: %w", err)
	}
	f.Start(ctx.Done())
	pf.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer cache for %s did not sync", typ)
		}
	}
	for typ, ok := range pf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer cache for %s did not sync", typ)
		}
	}
	return w, nil
}

// RunningPods returns the names of the Running, Ready, not deleting pods of
// Deployment app in ns.
func (w *Watch) RunningPods(ns, app string) []string {
	objs, _ := w.pods.ByIndex(byApp, ns+"/"+app)
	var out []string
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// PodCount returns how many bench pods exist (any phase).
func (w *Watch) PodCount() int { return len(w.pods.ListKeys()) }

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// FirstChangeAfter returns when Deployment ns/name's spec.replicas first
// changed after t, if it did.
func (w *Watch) FirstChangeAfter(key string, t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, at := range w.changes[key] {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// PodAutoscalerWrites returns the times of PodAutoscaler updates within [from, to].
func (w *Watch) PodAutoscalerWrites(from, to time.Time) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Time
	for _, at := range w.paWrites {
		if !at.Before(from) && !at.After(to) {
			out = append(out, at)
		}
	}
	return out
}

// ChangesWithin returns how many times Deployment key's spec.replicas
// changed within (from, to].
func (w *Watch) ChangesWithin(key string, from, to time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.changes[key] {
		if at.After(from) && !at.After(to) {
			n++
		}
	}
	return n
}
