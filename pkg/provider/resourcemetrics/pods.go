package resourcemetrics

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/metrics"

	"github.com/podpilot/podpilot/pkg/podcache"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// podStorage is the REST storage of metrics.k8s.io pods (kind PodMetrics).
type podStorage struct {
	p *Provider
	tableConvertor
}

var (
	_ rest.Storage              = (*podStorage)(nil)
	_ rest.KindProvider         = (*podStorage)(nil)
	_ rest.Scoper               = (*podStorage)(nil)
	_ rest.SingularNameProvider = (*podStorage)(nil)
	_ rest.Getter               = (*podStorage)(nil)
	_ rest.Lister               = (*podStorage)(nil)
)

// New implements rest.Storage.
func (s *podStorage) New() runtime.Object { return &metrics.PodMetrics{} }

// Destroy implements rest.Storage.
func (s *podStorage) Destroy() {}

// Kind implements rest.KindProvider.
func (s *podStorage) Kind() string { return "PodMetrics" }

// NamespaceScoped implements rest.Scoper.
func (s *podStorage) NamespaceScoped() bool { return true }

// GetSingularName implements rest.SingularNameProvider; empty, as in metrics-server, so that
// "pod" keeps naming core pods.
func (s *podStorage) GetSingularName() string { return "" }

// NewList implements rest.Lister.
func (s *podStorage) NewList() runtime.Object { return &metrics.PodMetricsList{} }

// Get implements rest.Getter with one query per resource for the pod; a pod that the lister
// does not hold in phase Running, or without samples, is a 404.
func (s *podStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	what := fmt.Sprintf("metrics of pod %s", klog.KRef(ns, name).String())
	obj, err := s.p.pods.ByNamespace(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err) || err == nil && !running(obj):
		return nil, apierrors.NewNotFound(metrics.Resource("podmetrics"), name)
	case err != nil:
		return nil, statusError(what, err)
	}
	req := rules.ObjectRequest{Resource: podsResource(), Namespace: ns}
	items, err := s.p.podMetrics(ctx, usageRequest{req: req, names: []string{name}})
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(metrics.Resource("podmetrics"), name)
	}
	return &items[0], nil
}

// List implements rest.Lister. The pods are those the lister holds in phase Running, as in
// prometheus-adapter and metrics-server (a pod deleted a moment ago, or Pending, Succeeded or
// Failed, is not listed while its series are still in the window). A namespace without a label
// selector is one query per resource for every pod in it (AllObjects) when the rules are
// separable, filtered by those pods; a label selector, or every namespace, queries each
// namespace by name (see usageRequest.request). The field selector (metadata.name,
// metadata.namespace) filters the result. Pods without samples are left out.
func (s *podStorage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	ns := genericapirequest.NamespaceValue(ctx)
	lsel, fsel := listSelectors(opts)
	var (
		items []metrics.PodMetrics
		err   error
	)
	if ns != "" && lsel.Empty() {
		items, err = s.p.namespacePodMetrics(ctx, ns)
	} else {
		items, err = s.p.listedPodMetrics(ctx, ns, lsel)
	}
	if err != nil {
		return nil, statusError(fmt.Sprintf("metrics of pods matching %q in namespace %q", lsel.String(), ns), err)
	}
	out := &metrics.PodMetricsList{Items: make([]metrics.PodMetrics, 0, len(items))}
	for _, item := range items {
		if matchesFields(fsel, &item.ObjectMeta, true) {
			out.Items = append(out.Items, item)
		}
	}
	klog.FromContext(ctx).V(4).Info("Served pod metrics", "namespace", ns, "labelSelector", lsel.String(),
		"fieldSelector", fsel.String(), "pods", len(out.Items))
	return out, nil
}

// namespacePodMetrics queries every running pod of namespace.
func (p *Provider) namespacePodMetrics(ctx context.Context, namespace string) ([]metrics.PodMetrics, error) {
	byNS, err := namesByNamespace(p.pods, namespace, labels.Everything(), running)
	if err != nil {
		return nil, err
	}
	req := rules.ObjectRequest{Resource: podsResource(), Namespace: namespace}
	return p.podMetrics(ctx, usageRequest{req: req, names: byNS[namespace], everything: true})
}

// listedPodMetrics queries the running pods the lister has for sel, namespace by namespace.
func (p *Provider) listedPodMetrics(ctx context.Context, namespace string, sel labels.Selector) ([]metrics.PodMetrics, error) {
	byNS, err := namesByNamespace(p.pods, namespace, sel, running)
	if err != nil {
		return nil, err
	}
	var items []metrics.PodMetrics
	for _, ns := range sortedKeys(byNS) {
		req := rules.ObjectRequest{Resource: podsResource(), Namespace: ns}
		nsItems, err := p.podMetrics(ctx, usageRequest{req: req, names: byNS[ns]})
		if err != nil {
			return nil, err
		}
		items = append(items, nsItems...)
	}
	return items, nil
}

// podMetrics fetches ur (pods of one namespace) and builds one PodMetrics per pod with samples,
// sorted by name, containers sorted by name.
func (p *Provider) podMetrics(ctx context.Context, ur usageRequest) ([]metrics.PodMetrics, error) {
	rq := p.rules()
	if rq == nil {
		return nil, errNoResourceRules
	}
	found, err := p.fetch(ctx, rq, ur)
	if err != nil {
		return nil, err
	}
	byPod := map[string]*metrics.PodMetrics{}
	for key, u := range found {
		pm, ok := byPod[key.object]
		if !ok {
			pm = &metrics.PodMetrics{
				ObjectMeta: metav1.ObjectMeta{Name: key.object, Namespace: ur.req.Namespace, CreationTimestamp: metav1.NewTime(p.clock.Now())},
				Timestamp:  metav1.NewTime(u.timestamp),
				Window:     metav1.Duration{Duration: rq.Window},
			}
			byPod[key.object] = pm
		}
		pm.Containers = append(pm.Containers, metrics.ContainerMetrics{Name: key.container, Usage: u.values})
		if u.timestamp.Before(pm.Timestamp.Time) {
			pm.Timestamp = metav1.NewTime(u.timestamp)
		}
	}
	items := make([]metrics.PodMetrics, 0, len(byPod))
	for _, name := range objectNames(found) {
		pm := byPod[name]
		sort.Slice(pm.Containers, func(i, j int) bool { return pm.Containers[i].Name < pm.Containers[j].Name })
		items = append(items, *pm)
	}
	return items, nil
}

// running reports whether a pod from the lister (a *podcache.Pod, or a *corev1.Pod) is in phase
// Running; anything else is not served.
func running(obj runtime.Object) bool {
	pod, ok := podcache.Of(obj)
	return ok && pod.Phase == corev1.PodRunning
}

// podUsage sums the usage of a pod's containers, for tables.
func podUsage(pm *metrics.PodMetrics) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, c := range pm.Containers {
		for name, q := range c.Usage {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

// windowOf formats a window for tables.
func windowOf(d metav1.Duration) string { return d.Duration.Round(time.Second).String() }
