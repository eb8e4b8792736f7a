package resourcemetrics

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// TestOpenAPIDefinitionsCoverEveryField guards the hand-written definitions against the types:
// every JSON field of each metrics.k8s.io/v1beta1 type is a property and nothing else is.
func TestOpenAPIDefinitionsCoverEveryField(t *testing.T) {
	defs := openAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	types := map[string]any{
		v1beta1.ContainerMetrics{}.OpenAPIModelName(): v1beta1.ContainerMetrics{},
		v1beta1.PodMetrics{}.OpenAPIModelName():       v1beta1.PodMetrics{},
		v1beta1.PodMetricsList{}.OpenAPIModelName():   v1beta1.PodMetricsList{},
		v1beta1.NodeMetrics{}.OpenAPIModelName():      v1beta1.NodeMetrics{},
		v1beta1.NodeMetricsList{}.OpenAPIModelName():  v1beta1.NodeMetricsList{},
	}
	if len(defs) != len(types) {
		t.Errorf("%d definitions, want %d", len(defs), len(types))
	}
	for name, typ := range types {
		def, ok := defs[name]
		if !ok {
			t.Errorf("no definition for %s", name)
			continue
		}
		fields := jsonFields(reflect.TypeOf(typ))
		for _, f := range fields {
			if _, ok := def.Schema.Properties[f]; !ok {
				t.Errorf("%s: field %q has no property", name, f)
			}
		}
		if len(def.Schema.Properties) != len(fields) {
			t.Errorf("%s: %d properties, want the %d fields %q", name, len(def.Schema.Properties), len(fields), fields)
		}
	}
}

// jsonFields lists the JSON names of a struct's fields, inlining embedded structs.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.Contains(opts, "inline") || (f.Anonymous && name == "") {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, name)
	}
	return out
}
