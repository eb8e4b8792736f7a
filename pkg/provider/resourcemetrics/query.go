package resourcemetrics

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// podsResource is the group-resource of pods in object requests.
func podsResource() schema.GroupResource { return schema.GroupResource{Resource: "pods"} }

// nodesResource is the group-resource of nodes in object requests.
func nodesResource() schema.GroupResource { return schema.GroupResource{Resource: "nodes"} }

// usageRequest is one fetch: the rules' container queries for pods or node queries for nodes.
type usageRequest struct {
	// req is the object request without its objects; req.Resource is pods or nodes.
	req rules.ObjectRequest
	// names are the objects asked for, sorted; the result keeps only them.
	names []string
	// everything is set when names are every object of the resource in the namespace, so that
	// a separable query may ask for every object at once.
	everything bool
}

// request is ur's object request for query q: by name, as prometheus-adapter asks, or, for a
// separable query (rules.ResourceQuery.Separable), every object at once (`pod!=""`) when the
// names are everything or past rules.MaxNamesMatcherBytes, the result then filtered by name.
// This keeps each request to one bounded query per resource without changing an answer.
func (ur usageRequest) request(q *rules.ResourceQuery) rules.ObjectRequest {
	req := ur.req
	wide := ur.everything || rules.NamesMatcherBytes(ur.names) > rules.MaxNamesMatcherBytes
	if wide && q.Separable(req.Resource) == nil {
		req.AllObjects = true
	} else {
		req.Names = ur.names
	}
	return req
}

// usageKey is an object and, for pods, one of its containers.
type usageKey struct {
	object    string
	container string
}

// usage is the usage of one object (or container) and the oldest timestamp of its samples.
type usage struct {
	values    corev1.ResourceList
	timestamp time.Time
}

// resourceSpec is how one system resource is queried and converted.
type resourceSpec struct {
	name     corev1.ResourceName
	query    *rules.ResourceQuery
	quantity func(float64) resource.Quantity
}

func resourceSpecs(rq *rules.ResourceQueries) []resourceSpec {
	return []resourceSpec{
		{name: corev1.ResourceCPU, query: rq.CPU, quantity: cpuQuantity},
		{name: corev1.ResourceMemory, query: rq.Memory, quantity: memoryQuantity},
	}
}

// cpuQuantity converts cores to a quantity in millicores, rounded.
func cpuQuantity(cores float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(math.Round(cores*1000)), resource.DecimalSI)
}

// memoryQuantity converts bytes to a quantity, rounded.
func memoryQuantity(bytes float64) resource.Quantity {
	return *resource.NewQuantity(int64(math.Round(bytes)), resource.BinarySI)
}

// fetch runs the cpu and then the memory query of ur, one query each, and groups the samples by
// object and, for pods, container. An object or container keeps whatever resources it has
// samples for; a consumer such as the HPA treats a missing one as missing data.
func (p *Provider) fetch(ctx context.Context, rq *rules.ResourceQueries, ur usageRequest) (map[usageKey]*usage, error) {
	out := map[usageKey]*usage{}
	if len(ur.names) == 0 {
		return out, nil
	}
	keep := keepSet(ur.names)
	for _, spec := range resourceSpecs(rq) {
		queries, err := renderQueries(spec.query, ur.request(spec.query))
		if err != nil {
			return nil, fmt.Errorf("%s query for %s: %w", spec.name, ur.req.Resource.String(), err)
		}
		vecs, err := prometheus.EachQuery(ctx, queries, func(ctx context.Context, q string) (model.Vector, error) {
			return p.prom.Query(ctx, q, time.Time{}) // zero: Prometheus's now
		})
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", spec.name, ur.req.Resource.String(), err)
		}
		for i, vec := range vecs {
			klog.FromContext(ctx).V(5).Info("Queried resource metric", "resource", spec.name,
				"objects", ur.req.Resource.String(), "namespace", ur.req.Namespace, "query", queries[i], "samples", len(vec))
			if err := addSamples(out, spec, ur.req.Resource, keep, vec); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// renderQueries renders the container query for pods and the node query for nodes: one query,
// or several for fewer objects each when one would exceed --metrics-max-query-bytes.
func renderQueries(q *rules.ResourceQuery, req rules.ObjectRequest) ([]string, error) {
	if req.Resource == nodesResource() {
		return q.NodeQueryChunks(req)
	}
	return q.ContainerQueryChunks(req)
}

// addSamples adds one resource's samples to out. Samples without an object (or, for pods, a
// container) label, of objects not kept, or with an infinite value are skipped. A NaN or
// negative sample counts as 0 with its own timestamp, as prometheus-adapter does: a counter
// reset or an empty rate window is usage 0, not a missing object.
func addSamples(out map[usageKey]*usage, spec resourceSpec, resource schema.GroupResource, keep map[string]struct{}, vec model.Vector) error {
	label, err := spec.query.LabelForResource(resource)
	if err != nil {
		return fmt.Errorf("%s label for %s: %w", spec.name, resource.String(), err)
	}
	containerLabel := ""
	if resource == podsResource() {
		containerLabel = spec.query.ContainerLabel()
	}
	for _, s := range vec {
		key := usageKey{object: string(s.Metric[model.LabelName(label)])}
		if containerLabel != "" {
			key.container = string(s.Metric[model.LabelName(containerLabel)])
		}
		v := sampleUsage(s.Value)
		if key.object == "" || (containerLabel != "" && key.container == "") || math.IsInf(v, 0) {
			continue
		}
		if _, ok := keep[key.object]; !ok {
			continue
		}
		ts := s.Timestamp.Time()
		u, ok := out[key]
		if !ok {
			u = &usage{values: corev1.ResourceList{}, timestamp: ts}
			out[key] = u
		}
		u.values[spec.name] = spec.quantity(v)
		if ts.Before(u.timestamp) {
			u.timestamp = ts
		}
	}
	return nil
}

// sampleUsage is a sample's value as usage: NaN and negative values are 0.
func sampleUsage(v model.SampleValue) float64 {
	f := float64(v)
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return f
}

// objectNames returns the sorted distinct object names of found.
func objectNames(found map[usageKey]*usage) []string {
	seen := map[string]struct{}{}
	var names []string
	for k := range found {
		if _, ok := seen[k.object]; !ok {
			seen[k.object] = struct{}{}
			names = append(names, k.object)
		}
	}
	sort.Strings(names)
	return names
}

// keepSet is the set of names, for usageRequest.keep.
func keepSet(names []string) map[string]struct{} {
	keep := make(map[string]struct{}, len(names))
	for _, n := range names {
		keep[n] = struct{}{}
	}
	return keep
}
