package v1alpha1

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// crdVersionSchema returns the openAPIV3Schema of the only version of the generated CRD.
func crdVersionSchema(t *testing.T) map[string]any {
	t.Helper()
	path := filepath.Join("..", "..", "..", "..", "manifests", "crd", "autoscaling.podpilot.io_podautoscalers.yaml")
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, path), &crd); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != SchemeGroupVersion.Version {
		t.Fatalf("%s: want the single version %s", path, SchemeGroupVersion.Version)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// at walks the properties of schema along path.
func at(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		props, _ := schema["properties"].(map[string]any)
		next, ok := props[p].(map[string]any)
		if !ok {
			t.Fatalf("CRD schema has no property %v", path)
		}
		schema = next
	}
	return schema
}

// The history bounds are written twice, as constants for the controller and
// as maxItems markers for the schema; this keeps them in step.
func TestCRDHistoryBoundsMatchConstants(t *testing.T) {
	schema := crdVersionSchema(t)
	tests := []struct {
		name string
		path []string
		want float64
	}{
		{name: "status.recommendations holds MaxRecommendations", path: []string{"status", "recommendations"}, want: MaxRecommendations},
		{name: "status.scaleEvents.scaleUp holds MaxScaleEvents", path: []string{"status", "scaleEvents", "scaleUp"}, want: MaxScaleEvents},
		{name: "status.scaleEvents.scaleDown holds MaxScaleEvents", path: []string{"status", "scaleEvents", "scaleDown"}, want: MaxScaleEvents},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, at(t, schema, tc.path...)["maxItems"]); diff != "" {
				t.Errorf("maxItems of %v (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}

func TestCRDDefaultsMinReplicas(t *testing.T) {
	got := at(t, crdVersionSchema(t), "spec", "minReplicas")["default"]
	if diff := cmp.Diff(float64(DefaultMinReplicas), got); diff != "" {
		t.Errorf("default of spec.minReplicas (-want +got):\n%s", diff)
	}
}

// mutateKinds changes every pointer, slice and map reachable from pa's Object, External and
// ContainerResource metrics and their status.
func mutateKinds(pa *PodAutoscaler) {
	for i := range pa.Spec.ObjectMetrics {
		m := &pa.Spec.ObjectMetrics[i]
		m.DescribedObject.Name = "changed"
		if m.Value != nil {
			*m.Value = resource.MustParse("1")
		}
		if m.Selector != nil {
			m.Selector.MatchLabels["code"] = "changed"
		}
	}
	for i := range pa.Spec.ExternalMetrics {
		m := &pa.Spec.ExternalMetrics[i]
		if m.AverageValue != nil {
			*m.AverageValue = resource.MustParse("1")
		}
		if m.Selector != nil {
			m.Selector.MatchLabels["queue"] = "changed"
		}
	}
	for i := range pa.Spec.ContainerResourceMetrics {
		if u := pa.Spec.ContainerResourceMetrics[i].AverageUtilization; u != nil {
			*u = 99
		}
	}
	for i := range pa.Status.CurrentMetrics {
		if v := pa.Status.CurrentMetrics[i].Value; v != nil {
			*v = resource.MustParse("1")
		}
	}
}

// status.currentMetrics has one entry per metric of the spec, so its bound must hold every
// metric list at its own bound.
func TestCRDCurrentMetricsHoldEveryMetric(t *testing.T) {
	schema := crdVersionSchema(t)
	var sum float64
	for _, list := range []string{"resourceMetrics", "customMetrics", "objectMetrics", "externalMetrics", "containerResourceMetrics"} {
		n, ok := at(t, schema, "spec", list)["maxItems"].(float64)
		if !ok {
			t.Fatalf("spec.%s has no maxItems", list)
		}
		sum += n
	}
	if diff := cmp.Diff(sum, at(t, schema, "status", "currentMetrics")["maxItems"]); diff != "" {
		t.Errorf("maxItems of status.currentMetrics (-sum of the spec lists +got):\n%s", diff)
	}
}

// The target types each kind accepts, as autoscaling/v2: the schema's enum rejects the others at
// admission, naming the field.
func TestCRDTargetTypesMatchTheKind(t *testing.T) {
	schema := crdVersionSchema(t)
	tests := []struct {
		name string
		path []string
		want []any
	}{
		{name: "Object metrics take Value or AverageValue", path: []string{"spec", "objectMetrics", "targetType"}, want: []any{"Value", "AverageValue"}},
		{name: "External metrics take Value or AverageValue", path: []string{"spec", "externalMetrics", "targetType"}, want: []any{"Value", "AverageValue"}},
		{name: "ContainerResource metrics take Utilization or AverageValue", path: []string{"spec", "containerResourceMetrics", "targetType"}, want: []any{"Utilization", "AverageValue"}},
		{name: "Resource metrics still take Utilization or AverageValue only", path: []string{"spec", "resourceMetrics", "targetType"}, want: []any{"Utilization", "AverageValue"}},
		{name: "status types cover every kind", path: []string{"status", "currentMetrics", "type"},
			want: []any{"Resource", "Custom", "Object", "External", "ContainerResource"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, itemsAt(t, schema, tc.path...)["enum"]); diff != "" {
				t.Errorf("enum of %v (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}

// itemsAt walks path like at, stepping into a list's items where the path continues past it.
func itemsAt(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, p := range path {
		if items, ok := schema["items"].(map[string]any); ok {
			schema = items
		}
		schema = at(t, schema, p)
	}
	return schema
}
