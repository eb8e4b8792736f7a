package resourcemetrics

import (
	"fmt"
	"sort"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/client-go/tools/cache"
)

// listSelectors returns the label and field selectors of opts; nil means everything.
func listSelectors(opts *metainternalversion.ListOptions) (labels.Selector, fields.Selector) {
	lsel, fsel := labels.Everything(), fields.Everything()
	if opts != nil && opts.LabelSelector != nil {
		lsel = opts.LabelSelector
	}
	if opts != nil && opts.FieldSelector != nil {
		fsel = opts.FieldSelector
	}
	return lsel, fsel
}

// namesByNamespace lists the objects matching sel (and keep, when not nil) from lister, in
// namespace (empty for every namespace or a cluster-scoped resource), and returns their sorted
// names by namespace.
func namesByNamespace(lister cache.GenericLister, namespace string, sel labels.Selector, keep func(runtime.Object) bool) (map[string][]string, error) {
	var (
		objs []runtime.Object
		err  error
	)
	if namespace == "" {
		objs, err = lister.List(sel)
	} else {
		objs, err = lister.ByNamespace(namespace).List(sel)
	}
	if err != nil {
		return nil, fmt.Errorf("list objects matching %q in namespace %q: %w", sel.String(), namespace, err)
	}
	out := map[string][]string{}
	for _, obj := range objs {
		if keep != nil && !keep(obj) {
			continue
		}
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("list objects matching %q: %w", sel.String(), err)
		}
		out[m.GetNamespace()] = append(out[m.GetNamespace()], m.GetName())
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// matchesFields reports whether meta matches the field selector on metadata.name and
// metadata.namespace, the fields metrics-server supports.
func matchesFields(sel fields.Selector, meta *metav1.ObjectMeta, namespaced bool) bool {
	return sel.Empty() || sel.Matches(generic.ObjectMetaFieldsSet(meta, namespaced))
}
