package v1alpha1

import (
	"path/filepath"
	"strings"
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

// TestCRDIsStricterThanTheHPAWhereDocumented pins each rule by which admission is stricter than
// the autoscaling/v2 HPA's (docs/podautoscaler.md lists them): the HPA admits every such spec.
func TestCRDIsStricterThanTheHPAWhereDocumented(t *testing.T) {
	schema := crdVersionSchema(t)
	tests := []struct {
		name string
		path []string
		key  string
		want any
	}{
		{name: "no metric at all is rejected (the HPA defaults to cpu at 80%)", path: []string{"spec"}, key: "x-kubernetes-validations",
			want: "at least one metric must be set"},
		{name: "the scale target is a Deployment or a StatefulSet (the HPA takes any kind with a scale subresource)",
			path: []string{"spec", "scaleTargetKind"}, key: "x-kubernetes-validations", want: "scaleTargetKind must be deployment or statefulset"},
		{name: "Resource metrics read cpu or memory only", path: []string{"spec", "resourceMetrics", "resourceName"}, key: "enum", want: []any{"cpu", "memory"}},
		{name: "ContainerResource metrics read cpu or memory only", path: []string{"spec", "containerResourceMetrics", "resourceName"}, key: "enum", want: []any{"cpu", "memory"}},
		{name: "at most 2 Resource metrics", path: []string{"spec", "resourceMetrics"}, key: "maxItems", want: float64(2)},
		{name: "at most 10 custom metrics", path: []string{"spec", "customMetrics"}, key: "maxItems", want: float64(10)},
		{name: "at most 10 Object metrics", path: []string{"spec", "objectMetrics"}, key: "maxItems", want: float64(10)},
		{name: "at most 10 External metrics", path: []string{"spec", "externalMetrics"}, key: "maxItems", want: float64(10)},
		{name: "at most 10 ContainerResource metrics", path: []string{"spec", "containerResourceMetrics"}, key: "maxItems", want: float64(10)},
		{name: "at most 10 scale-up policies", path: []string{"spec", "behavior", "scaleUp", "policies"}, key: "maxItems", want: float64(10)},
		{name: "at most 10 scale-down policies", path: []string{"spec", "behavior", "scaleDown", "policies"}, key: "maxItems", want: float64(10)},
		{name: "one Resource metric per resource", path: []string{"spec", "resourceMetrics"}, key: "x-kubernetes-list-map-keys", want: []any{"resourceName"}},
		{name: "one custom metric per name", path: []string{"spec", "customMetrics"}, key: "x-kubernetes-list-map-keys", want: []any{"metricName"}},
		{name: "one ContainerResource metric per container and resource", path: []string{"spec", "containerResourceMetrics"}, key: "x-kubernetes-list-map-keys",
			want: []any{"container", "resourceName"}},
		{name: "an Object target's type agrees with its fields", path: []string{"spec", "objectMetrics"}, key: "x-kubernetes-validations",
			want: "averageValue must not be set when targetType is Value"},
		{name: "an External target's type agrees with its fields", path: []string{"spec", "externalMetrics"}, key: "x-kubernetes-validations",
			want: "value is required when targetType is Value"},
		{name: "a Resource target's type agrees with its fields", path: []string{"spec", "resourceMetrics"}, key: "x-kubernetes-validations",
			want: "averageUtilization is required when targetType is Utilization"},
		{name: "a ContainerResource target's type agrees with its fields", path: []string{"spec", "containerResourceMetrics"}, key: "x-kubernetes-validations",
			want: "averageValue is required when targetType is AverageValue"},
		{name: "scaleTargetName is at most 253 characters", path: []string{"spec", "scaleTargetName"}, key: "maxLength", want: float64(253)},
		{name: "a custom metric name is at most 253 characters", path: []string{"spec", "customMetrics", "metricName"}, key: "maxLength", want: float64(253)},
		{name: "an Object metric name is at most 253 characters", path: []string{"spec", "objectMetrics", "metricName"}, key: "maxLength", want: float64(253)},
		{name: "an External metric name is at most 253 characters", path: []string{"spec", "externalMetrics", "metricName"}, key: "maxLength", want: float64(253)},
		{name: "a described object's name is at most 253 characters", path: []string{"spec", "objectMetrics", "describedObject", "name"}, key: "maxLength", want: float64(253)},
		{name: "a described object's apiVersion is at most 253 characters", path: []string{"spec", "objectMetrics", "describedObject", "apiVersion"}, key: "maxLength", want: float64(253)},
		{name: "a described object's kind is at most 63 characters", path: []string{"spec", "objectMetrics", "describedObject", "kind"}, key: "maxLength", want: float64(63)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := itemsAt(t, schema, tc.path...)
			if _, isList := got["items"]; isList && tc.key == "x-kubernetes-validations" {
				got = got["items"].(map[string]any) // the rules of a list's items
			}
			if msg, ok := tc.want.(string); ok {
				rules, _ := got[tc.key].([]any)
				for _, r := range rules {
					if m, _ := r.(map[string]any)["message"].(string); strings.Contains(m, msg) {
						return
					}
				}
				t.Errorf("%v has no rule saying %q: %v", tc.path, msg, rules)
				return
			}
			if diff := cmp.Diff(tc.want, got[tc.key]); diff != "" {
				t.Errorf("%s of %v (-want +got):\n%s", tc.key, tc.path, diff)
			}
		})
	}
}

// The coming upstream fields carry their KEP's bounds, which admission enforces naming the field:
// KEP-5679's fallback (failureDurationSeconds at least 180, its default; replicas at least 1) and
// KEP-6003's behavior.syncPeriodSeconds (1 to 3600).
func TestCRDBoundsOfTheComingUpstreamFieldsAreTheKEPs(t *testing.T) {
	schema := crdVersionSchema(t)
	fallback := []string{"spec", "externalMetrics", "fallback"}
	tests := []struct {
		name string
		path []string
		key  string
		want any
	}{
		{"failureDurationSeconds is at least 180 s (KEP-5679)", append(fallback, "failureDurationSeconds"), "minimum", float64(DefaultFailureDurationSeconds)},
		{"failureDurationSeconds defaults to 180 s (KEP-5679)", append(fallback, "failureDurationSeconds"), "default", float64(180)},
		{"the fallback's replicas are at least 1 (KEP-5679)", append(fallback, "replicas"), "minimum", float64(1)},
		{"syncPeriodSeconds is at least 1 s (KEP-6003)", []string{"spec", "behavior", "syncPeriodSeconds"}, "minimum", float64(1)},
		{"syncPeriodSeconds is at most 3600 s (KEP-6003)", []string{"spec", "behavior", "syncPeriodSeconds"}, "maximum", float64(3600)},
		{"fallbackStatus is Normal or Fallback (KEP-5679)", []string{"status", "currentMetrics", "fallbackStatus"}, "enum", []any{"Normal", "Fallback"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, itemsAt(t, schema, tc.path...)[tc.key]); diff != "" {
				t.Errorf("%s of %v (-want +got):\n%s", tc.key, tc.path, diff)
			}
		})
	}
	if diff := cmp.Diff([]any{"replicas"}, itemsAt(t, schema, fallback...)["required"]); diff != "" {
		t.Errorf("required of the fallback (-want +got):\n%s", diff)
	}
}
