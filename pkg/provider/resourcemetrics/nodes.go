package resourcemetrics

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/metrics"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// nodeStorage is the REST storage of metrics.k8s.io nodes (kind NodeMetrics).
type nodeStorage struct {
	p *Provider
	tableConvertor
}

var (
	_ rest.Storage              = (*nodeStorage)(nil)
	_ rest.KindProvider         = (*nodeStorage)(nil)
	_ rest.Scoper               = (*nodeStorage)(nil)
	_ rest.SingularNameProvider = (*nodeStorage)(nil)
	_ rest.Getter               = (*nodeStorage)(nil)
	_ rest.Lister               = (*nodeStorage)(nil)
)

// New implements rest.Storage.
func (s *nodeStorage) New() runtime.Object { return &metrics.NodeMetrics{} }

// Destroy implements rest.Storage.
func (s *nodeStorage) Destroy() {}

// Kind implements rest.KindProvider.
func (s *nodeStorage) Kind() string { return "NodeMetrics" }

// NamespaceScoped implements rest.Scoper.
func (s *nodeStorage) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider; empty, as in metrics-server.
func (s *nodeStorage) GetSingularName() string { return "" }

// NewList implements rest.Lister.
func (s *nodeStorage) NewList() runtime.Object { return &metrics.NodeMetricsList{} }

// Get implements rest.Getter with one query per resource for the node; a node that the node
// lister does not hold (deleted a moment ago, while its series are still in the window), or
// without samples, is a 404, as List leaves it out.
func (s *nodeStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	what := fmt.Sprintf("metrics of node %s", name)
	switch _, err := s.p.nodes.Get(name); {
	case apierrors.IsNotFound(err):
		return nil, apierrors.NewNotFound(metrics.Resource("nodemetrics"), name)
	case err != nil:
		return nil, statusError(what, err)
	}
	req := rules.ObjectRequest{Resource: nodesResource()}
	items, err := s.p.nodeMetrics(ctx, usageRequest{req: req, names: []string{name}})
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(metrics.Resource("nodemetrics"), name)
	}
	return &items[0], nil
}

// List implements rest.Lister: the node names come from the node lister, with or without a
// label selector, so only nodes that exist are listed (as prometheus-adapter, which lists the
// nodes first), and one query per resource asks for them. The field selector (metadata.name)
// filters the result. Nodes without samples are left out.
func (s *nodeStorage) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	lsel, fsel := listSelectors(opts)
	what := fmt.Sprintf("metrics of nodes matching %q", lsel.String())
	byNS, err := namesByNamespace(s.p.nodes, "", lsel, nil)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(byNS[""]) == 0 {
		return &metrics.NodeMetricsList{Items: []metrics.NodeMetrics{}}, nil
	}
	items, err := s.p.nodeMetrics(ctx, usageRequest{req: rules.ObjectRequest{Resource: nodesResource()}, names: byNS[""]})
	if err != nil {
		return nil, statusError(what, err)
	}
	out := &metrics.NodeMetricsList{Items: make([]metrics.NodeMetrics, 0, len(items))}
	for _, item := range items {
		if matchesFields(fsel, &item.ObjectMeta, false) {
			out.Items = append(out.Items, item)
		}
	}
	klog.FromContext(ctx).V(4).Info("Served node metrics", "labelSelector", lsel.String(),
		"fieldSelector", fsel.String(), "nodes", len(out.Items))
	return out, nil
}

// nodeMetrics fetches ur and builds one NodeMetrics per node with samples, sorted by name.
func (p *Provider) nodeMetrics(ctx context.Context, ur usageRequest) ([]metrics.NodeMetrics, error) {
	rq := p.rules()
	if rq == nil {
		return nil, errNoResourceRules
	}
	found, err := p.fetch(ctx, rq, ur)
	if err != nil {
		return nil, err
	}
	items := make([]metrics.NodeMetrics, 0, len(found))
	for _, name := range objectNames(found) {
		u := found[usageKey{object: name}]
		items = append(items, metrics.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(p.clock.Now())},
			Timestamp:  metav1.NewTime(u.timestamp),
			Window:     metav1.Duration{Duration: rq.Window},
			Usage:      u.values,
		})
	}
	return items, nil
}
