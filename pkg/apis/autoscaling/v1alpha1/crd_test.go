package v1alpha1

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
