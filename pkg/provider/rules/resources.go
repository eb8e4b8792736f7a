package rules

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceMapper resolves a possibly singular, possibly group-less resource to its canonical
// plural group-resource, and singularizes resources. Any apimeta.RESTMapper satisfies it; the
// provider passes its discovery-backed mapper, tests and offline tools use StaticMapper.
type ResourceMapper interface {
	ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error)
	ResourceSingularizer(resource string) (singular string, err error)
}

var _ ResourceMapper = apimeta.RESTMapper(nil)

// namespacesResource is the group-resource of namespaces; a series carrying its label is
// namespaced. nodesResource is, like it, cluster-scoped.
func namespacesResource() schema.GroupResource { return schema.GroupResource{Resource: "namespaces"} }

func nodesResource() schema.GroupResource { return schema.GroupResource{Resource: "nodes"} }

// groupSanitizer makes an API group usable inside a label name, as prometheus-adapter does.
var groupSanitizer = strings.NewReplacer(".", "_", "-", "_")

// StaticMapper returns a mapper that knows the common built-in resources (namespaces, nodes,
// persistentvolumes, pods, services, persistentvolumeclaims, deployments, statefulsets,
// replicasets, daemonsets, jobs, cronjobs, ingresses). It cannot know custom resources.
func StaticMapper() apimeta.RESTMapper {
	core := schema.GroupVersion{Version: "v1"}
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	batch := schema.GroupVersion{Group: "batch", Version: "v1"}
	networking := schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
	m := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{core, apps, batch, networking})
	for _, kind := range []string{"Namespace", "Node", "PersistentVolume"} {
		m.Add(core.WithKind(kind), apimeta.RESTScopeRoot)
	}
	for _, kind := range []string{"Pod", "Service", "PersistentVolumeClaim"} {
		m.Add(core.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	for _, kind := range []string{"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"} {
		m.Add(apps.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	for _, kind := range []string{"Job", "CronJob"} {
		m.Add(batch.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	m.Add(networking.WithKind("Ingress"), apimeta.RESTScopeNamespace)
	return m
}

// resourceMapping is a compiled ResourceMapping: it maps label names to group-resources and
// back. It is immutable; lookups that need the mapper are recomputed, not cached.
type resourceMapping struct {
	mapper          ResourceMapper
	labelToResource map[string]schema.GroupResource
	resourceToLabel map[schema.GroupResource]string
	template        *template.Template
	extractor       *regexp.Regexp // from template, with "group" and "resource" groups
}

// compileResourceMapping normalizes overrides with the mapper and compiles the template.
func compileResourceMapping(cfg ResourceMapping, mapper ResourceMapper) (*resourceMapping, error) {
	rm := &resourceMapping{
		mapper:          mapper,
		labelToResource: map[string]schema.GroupResource{},
		resourceToLabel: map[schema.GroupResource]string{},
	}
	if cfg.Template != "" {
		tmpl, extractor, err := parseResourceTemplate(cfg.Template)
		if err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
		rm.template, rm.extractor = tmpl, extractor
	}
	labels := make([]string, 0, len(cfg.Overrides))
	for label := range cfg.Overrides {
		labels = append(labels, label)
	}
	sort.Strings(labels) // deterministic reverse mapping when two labels name one resource
	for _, label := range labels {
		raw := cfg.Overrides[label]
		gr, err := normalize(mapper, schema.GroupResource{Group: raw.Group, Resource: raw.Resource})
		if err != nil {
			return nil, fmt.Errorf("overrides[%s]: %w", label, err)
		}
		rm.labelToResource[label] = gr
		if _, taken := rm.resourceToLabel[gr]; !taken {
			rm.resourceToLabel[gr] = label
		}
	}
	return rm, nil
}

func normalize(mapper ResourceMapper, gr schema.GroupResource) (schema.GroupResource, error) {
	gvr, err := mapper.ResourceFor(gr.WithVersion(""))
	if err != nil {
		return schema.GroupResource{}, fmt.Errorf("normalize group-resource %q: %w", gr.String(), err)
	}
	return gvr.GroupResource(), nil
}

// parseResourceTemplate parses a label template and derives the regex that recognizes labels of
// that form, by rendering the template with capture groups as Group and Resource.
func parseResourceTemplate(text string) (*template.Template, *regexp.Regexp, error) {
	tmpl, err := template.New("resource-label").Delims("<<", ">>").Parse(text)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	args := schema.GroupResource{Group: "(?P<group>.+?)", Resource: "(?P<resource>.+?)"}
	if err := tmpl.Execute(&buf, args); err != nil {
		return nil, nil, err
	}
	extractor, err := regexp.Compile("^" + buf.String() + "$")
	if err != nil {
		return nil, nil, fmt.Errorf("label pattern: %w", err)
	}
	if extractor.SubexpIndex("resource") < 0 {
		return nil, nil, fmt.Errorf("must contain <<.Resource>>")
	}
	return tmpl, extractor, nil
}

// resourceForLabel returns the group-resource a label names, if any: overrides first, then the
// template form, normalized with the mapper (labels the mapper does not know are skipped).
func (rm *resourceMapping) resourceForLabel(label string) (schema.GroupResource, bool) {
	if gr, ok := rm.labelToResource[label]; ok {
		return gr, true
	}
	if rm.extractor == nil {
		return schema.GroupResource{}, false
	}
	m := rm.extractor.FindStringSubmatch(label)
	if m == nil {
		return schema.GroupResource{}, false
	}
	raw := schema.GroupResource{Resource: m[rm.extractor.SubexpIndex("resource")]}
	if i := rm.extractor.SubexpIndex("group"); i >= 0 {
		raw.Group = m[i]
	}
	gr, err := normalize(rm.mapper, raw)
	if err != nil {
		return schema.GroupResource{}, false
	}
	return gr, true
}

// labelForResource returns the label that carries the names of objects of gr.
func (rm *resourceMapping) labelForResource(gr schema.GroupResource) (string, error) {
	if label, ok := rm.resourceToLabel[gr]; ok {
		return label, nil
	}
	if rm.template == nil {
		return "", fmt.Errorf("no label for resource %q: no override and no template", gr.String())
	}
	singular, err := rm.mapper.ResourceSingularizer(gr.Resource)
	if err != nil {
		return "", fmt.Errorf("singularize resource %q: %w", gr.String(), err)
	}
	var buf bytes.Buffer
	args := schema.GroupResource{Group: groupSanitizer.Replace(gr.Group), Resource: singular}
	if err := rm.template.Execute(&buf, args); err != nil {
		return "", fmt.Errorf("label for resource %q: %w", gr.String(), err)
	}
	label := buf.String()
	if err := checkLabelName(label); err != nil {
		return "", fmt.Errorf("label for resource %q: %w", gr.String(), err)
	}
	return label, nil
}

// resourcesForLabels returns the sorted group-resources named by the given label names and
// whether one of them is the namespaces resource.
func (rm *resourceMapping) resourcesForLabels(labelNames []string) ([]schema.GroupResource, bool) {
	seen := map[schema.GroupResource]bool{}
	var out []schema.GroupResource
	for _, label := range labelNames {
		gr, ok := rm.resourceForLabel(label)
		if !ok || seen[gr] {
			continue
		}
		seen[gr] = true
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, seen[namespacesResource()]
}
