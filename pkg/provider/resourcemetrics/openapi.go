package resourcemetrics

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// AddOpenAPIDefinitions adds the metrics.k8s.io/v1beta1 definitions to cfg's OpenAPI v2 and v3
// configs, with their group-version-kind extensions. The generic server builds its OpenAPI
// models from these configs when the group is installed and when it prepares to run (a missing
// definition then stops the process), and custom-metrics-apiserver's generated definitions do
// not include the metrics types. cfg is the config the server was built from; the server
// shares its OpenAPI configs, so call this before Install and PrepareRun.
func AddOpenAPIDefinitions(cfg *genericapiserver.Config) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	namer := openapinamer.NewDefinitionNamer(scheme)
	if c := cfg.OpenAPIConfig; c != nil {
		c.GetDefinitionName = withNames(c.GetDefinitionName, namer)
		c.GetDefinitions = withDefinitions(c.GetDefinitions)
		c.Definitions = withStaticDefinitions(c.Definitions, c.GetDefinitionName, "#/definitions/")
	}
	if c := cfg.OpenAPIV3Config; c != nil {
		c.GetDefinitionName = withNames(c.GetDefinitionName, namer)
		c.GetDefinitions = withDefinitions(c.GetDefinitions)
		// DefaultOpenAPIV3Config fills Definitions, which take precedence over GetDefinitions.
		c.Definitions = withStaticDefinitions(c.Definitions, c.GetDefinitionName, "#/components/schemas/")
	}
	return nil
}

// withDefinitions adds the metrics definitions to a config's definitions getter.
func withDefinitions(get common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		out := map[string]common.OpenAPIDefinition{}
		if get != nil {
			for k, v := range get(ref) {
				out[k] = v
			}
		}
		for k, v := range openAPIDefinitions(ref) {
			out[k] = v
		}
		return out
	}
}

// withStaticDefinitions returns a copy of a config's static definitions with the metrics
// definitions added, their references rendered under prefix as the config names them; nil
// stays nil.
func withStaticDefinitions(defs map[string]common.OpenAPIDefinition, name func(string) (string, spec.Extensions), prefix string) map[string]common.OpenAPIDefinition {
	if defs == nil {
		return nil
	}
	ref := func(model string) spec.Ref {
		n, _ := name(model)
		return spec.MustCreateRef(prefix + common.EscapeJsonPointer(n))
	}
	out := make(map[string]common.OpenAPIDefinition, len(defs)+5)
	for k, v := range defs {
		out[k] = v
	}
	for k, v := range openAPIDefinitions(ref) {
		out[k] = v
	}
	return out
}

// withNames names the metrics types with their group-version-kinds and everything else as
// before.
func withNames(prev func(string) (string, spec.Extensions), namer *openapinamer.DefinitionNamer) func(string) (string, spec.Extensions) {
	return func(name string) (string, spec.Extensions) {
		if n, ext := namer.GetDefinitionName(name); ext != nil || prev == nil {
			return n, ext
		}
		return prev(name)
	}
}

// openAPIDefinitions defines the metrics.k8s.io/v1beta1 types, after openapi-gen's output for
// k8s.io/metrics (which publishes none); TestOpenAPIDefinitionsCoverEveryField guards the
// fields.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	usage := spec.Schema{SchemaProps: spec.SchemaProps{
		Description: "Usage by resource name: cpu in cores, memory in bytes.",
		Type:        []string{"object"},
		AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{
			SchemaProps: spec.SchemaProps{Ref: ref(resource.Quantity{}.OpenAPIModelName())},
		}},
	}}
	objectProps := func(items spec.Schema, itemsName string) map[string]spec.Schema {
		return map[string]spec.Schema{
			"kind":       stringSchema("Kind is the REST resource this object represents, in CamelCase."),
			"apiVersion": stringSchema("APIVersion is the versioned schema of this representation of an object."),
			"metadata":   refSchema(ref, metav1.ObjectMeta{}.OpenAPIModelName(), "Standard object's metadata."),
			"timestamp":  refSchema(ref, metav1.Time{}.OpenAPIModelName(), "The end of the window the usage was measured over."),
			"window":     refSchema(ref, metav1.Duration{}.OpenAPIModelName(), "The window the usage was measured over."),
			itemsName:    items,
		}
	}
	containers := listSchema(ref, v1beta1.ContainerMetrics{}.OpenAPIModelName(), "Metrics for all containers, collected within the same time window.")
	objectDeps := []string{metav1.Duration{}.OpenAPIModelName(), metav1.ObjectMeta{}.OpenAPIModelName(), metav1.Time{}.OpenAPIModelName()}
	return map[string]common.OpenAPIDefinition{
		v1beta1.ContainerMetrics{}.OpenAPIModelName(): definition("ContainerMetrics sets resource usage metrics of a container.",
			map[string]spec.Schema{"name": stringSchema("Container name corresponding to the one from pod.spec.containers."), "usage": usage},
			[]string{"name", "usage"}, resource.Quantity{}.OpenAPIModelName()),
		v1beta1.PodMetrics{}.OpenAPIModelName(): definition("PodMetrics sets resource usage metrics of a pod.",
			objectProps(containers, "containers"), []string{"timestamp", "window", "containers"},
			append(objectDeps, v1beta1.ContainerMetrics{}.OpenAPIModelName())...),
		v1beta1.NodeMetrics{}.OpenAPIModelName(): definition("NodeMetrics sets resource usage metrics of a node.",
			objectProps(usage, "usage"), []string{"timestamp", "window", "usage"},
			append(objectDeps, resource.Quantity{}.OpenAPIModelName())...),
		v1beta1.PodMetricsList{}.OpenAPIModelName():  listDefinition(ref, "PodMetricsList is a list of PodMetrics.", v1beta1.PodMetrics{}.OpenAPIModelName()),
		v1beta1.NodeMetricsList{}.OpenAPIModelName(): listDefinition(ref, "NodeMetricsList is a list of NodeMetrics.", v1beta1.NodeMetrics{}.OpenAPIModelName()),
	}
}

func definition(desc string, props map[string]spec.Schema, required []string, deps ...string) common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{SchemaProps: spec.SchemaProps{
			Description: desc, Type: []string{"object"}, Properties: props, Required: required,
		}},
		Dependencies: deps,
	}
}

func listDefinition(ref common.ReferenceCallback, desc, item string) common.OpenAPIDefinition {
	return definition(desc, map[string]spec.Schema{
		"kind":       stringSchema("Kind is the REST resource this object represents, in CamelCase."),
		"apiVersion": stringSchema("APIVersion is the versioned schema of this representation of an object."),
		"metadata":   refSchema(ref, metav1.ListMeta{}.OpenAPIModelName(), "Standard list metadata."),
		"items":      listSchema(ref, item, "List of metrics."),
	}, []string{"items"}, metav1.ListMeta{}.OpenAPIModelName(), item)
}

func stringSchema(desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"string"}}}
}

func refSchema(ref common.ReferenceCallback, model, desc string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Ref: ref(model)}}
}

func listSchema(ref common.ReferenceCallback, item, desc string) spec.Schema {
	return spec.Schema{
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "atomic"}},
		SchemaProps: spec.SchemaProps{
			Description: desc,
			Type:        []string{"array"},
			Items:       &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(item)}}},
		},
	}
}
