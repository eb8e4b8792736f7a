package crdcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// repoRoot is the podpilot checkout, four levels above this package.
var repoRoot = filepath.Join("..", "..", "..", "..")

const crdFile = "manifests/crd/autoscaling.podpilot.io_podautoscalers.yaml"

// loadCRD reads the generated CRD and converts it to the internal type the
// API server validates, with the v1 defaults applied.
func loadCRD(t *testing.T) *apiextensions.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, crdFile))
	if err != nil {
		t.Fatalf("read CRD: %v", err)
	}
	var v1crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &v1crd); err != nil {
		t.Fatalf("parse CRD: %v", err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1crd)
	var crd apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1crd, &crd, nil); err != nil {
		t.Fatalf("convert CRD: %v", err)
	}
	return &crd
}

// The API server runs this on create: structural schema, CEL compilation
// and the estimated CEL cost against the per-rule and per-CRD budgets.
func TestCRDPassesAPIServerValidation(t *testing.T) {
	if errs := crdvalidation.ValidateCustomResourceDefinition(t.Context(), loadCRD(t)); len(errs) > 0 {
		t.Fatalf("CRD rejected:\n%v", errs.ToAggregate())
	}
}

// admitter runs the create-time steps the API server applies to a custom
// resource: pruning (reported, as strict field validation does),
// defaulting, OpenAPI schema, list-type and CEL validation.
type admitter struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaCreateValidator
	cel        *cel.Validator
}

func newAdmitter(t *testing.T) *admitter {
	t.Helper()
	crd := loadCRD(t)
	// With one version, the internal type keeps the schema at spec.validation.
	if crd.Spec.Validation == nil {
		t.Fatalf("CRD has no top-level schema")
	}
	props := crd.Spec.Validation.OpenAPIV3Schema
	structural, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatalf("structural schema: %v", err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatalf("schema validator: %v", err)
	}
	return &admitter{structural: structural, schema: validator, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
}

func (a *admitter) admit(t *testing.T, obj map[string]any) field.ErrorList {
	t.Helper()
	var errs field.ErrorList
	unknown := pruning.PruneWithOptions(obj, a.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		errs = append(errs, field.Forbidden(field.NewPath(p), "unknown field"))
	}
	defaulting.Default(obj, a.structural)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, a.schema)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, a.structural, obj)...)
	celErrs, _ := a.cel.Validate(t.Context(), nil, a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// example returns the seed example as an unstructured object.
func example(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "manifests", "examples", "hpa-vg1-vanguard.yaml"))
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	// Decode numbers as the API server does: integers as int64.
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(jsonData, &obj); err != nil {
		t.Fatalf("parse example: %v", err)
	}
	return obj
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func resourceMetric(obj map[string]any, i int) map[string]any {
	return spec(obj)["resourceMetrics"].([]any)[i].(map[string]any)
}

func customMetric(obj map[string]any, i int) map[string]any {
	return spec(obj)["customMetrics"].([]any)[i].(map[string]any)
}

func TestAdmission(t *testing.T) {
	tests := []admissionCase{
		{name: "the seed example is admitted as written", mutate: func(map[string]any) {}},
		{name: "scaleTargetKind is case-insensitive: Deployment is admitted", mutate: func(o map[string]any) { spec(o)["scaleTargetKind"] = "Deployment" }},
		{name: "scaleTargetKind is case-insensitive: StatefulSet is admitted", mutate: func(o map[string]any) { spec(o)["scaleTargetKind"] = "StatefulSet" }},
		{
			name:   "scaleTargetKind other than deployment or statefulset is rejected",
			mutate: func(o map[string]any) { spec(o)["scaleTargetKind"] = "ReplicaSet" },
			want:   []string{"spec.scaleTargetKind: Invalid value", "scaleTargetKind must be deployment or statefulset"},
		},
		{
			name:   "maxReplicas below minReplicas is rejected on spec.maxReplicas",
			mutate: func(o map[string]any) { spec(o)["minReplicas"] = int64(6) },
			want:   []string{"spec.maxReplicas: Invalid value", "maxReplicas must be >= minReplicas"},
		},
		{
			name:   "unset minReplicas defaults to 1, so maxReplicas 1 is admitted",
			mutate: func(o map[string]any) { delete(spec(o), "minReplicas"); spec(o)["maxReplicas"] = int64(1) },
		},
		{
			name:   "minReplicas 0 without an Object or External metric is rejected on spec.minReplicas",
			mutate: func(o map[string]any) { spec(o)["minReplicas"] = int64(0) },
			want:   []string{"spec.minReplicas: Invalid value", "minReplicas 0 (scale to zero) needs at least one metric in objectMetrics or externalMetrics"},
		},
		{
			name: "minReplicas 0 with an External metric is admitted (scale to zero)",
			mutate: func(o map[string]any) {
				spec(o)["minReplicas"] = int64(0)
				spec(o)["externalMetrics"] = []any{map[string]any{"metricName": "queue", "targetType": "Value", "value": "10"}}
			},
		},
		{
			name:   "minReplicas 0 with an empty externalMetrics list is rejected on spec.minReplicas",
			mutate: func(o map[string]any) { spec(o)["minReplicas"] = int64(0); spec(o)["externalMetrics"] = []any{} },
			want:   []string{"spec.minReplicas: Invalid value", "needs at least one metric in objectMetrics or externalMetrics"},
		},
		{
			name:   "a negative minReplicas is rejected",
			mutate: func(o map[string]any) { spec(o)["minReplicas"] = int64(-1) },
			want:   []string{"spec.minReplicas: Invalid value: -1: spec.minReplicas in body should be greater than or equal to 0"},
		},
		{
			name:   "maxReplicas 0 is rejected",
			mutate: func(o map[string]any) { spec(o)["maxReplicas"] = int64(0) },
			want:   []string{"spec.maxReplicas: Invalid value: 0: spec.maxReplicas in body should be greater than or equal to 1"},
		},
		{
			name:   "missing maxReplicas is rejected",
			mutate: func(o map[string]any) { delete(spec(o), "maxReplicas") },
			want:   []string{"spec.maxReplicas: Required value"},
		},
		{
			name: "a spec without any metric is rejected",
			mutate: func(o map[string]any) {
				delete(spec(o), "resourceMetrics")
				spec(o)["customMetrics"] = []any{}
			},
			want: []string{"at least one metric must be set in resourceMetrics, customMetrics, objectMetrics, externalMetrics or containerResourceMetrics"},
		},
		{
			name:   "only custom metrics is admitted",
			mutate: func(o map[string]any) { delete(spec(o), "resourceMetrics") },
		},
		{
			name:   "Utilization without averageUtilization is rejected on that field",
			mutate: func(o map[string]any) { delete(resourceMetric(o, 0), "averageUtilization") },
			want:   []string{"spec.resourceMetrics[0].averageUtilization: Invalid value", "averageUtilization is required when targetType is Utilization"},
		},
		{
			name:   "Utilization with averageValue is rejected on averageValue",
			mutate: func(o map[string]any) { resourceMetric(o, 0)["averageValue"] = "100m" },
			want:   []string{"spec.resourceMetrics[0].averageValue: Invalid value", "averageValue must not be set when targetType is Utilization"},
		},
		{
			name:   "AverageValue without averageValue is rejected on that field",
			mutate: func(o map[string]any) { delete(resourceMetric(o, 1), "averageValue") },
			want:   []string{"spec.resourceMetrics[1].averageValue: Invalid value", "averageValue is required when targetType is AverageValue"},
		},
		{
			name:   "AverageValue with averageUtilization is rejected on averageUtilization",
			mutate: func(o map[string]any) { resourceMetric(o, 1)["averageUtilization"] = int64(50) },
			want:   []string{"spec.resourceMetrics[1].averageUtilization: Invalid value", "averageUtilization must not be set when targetType is AverageValue"},
		},
		{
			name:   "averageUtilization 0 is rejected",
			mutate: func(o map[string]any) { resourceMetric(o, 0)["averageUtilization"] = int64(0) },
			want:   []string{"spec.resourceMetrics[0].averageUtilization: Invalid value: 0"},
		},
		{
			name:   "a resource other than cpu or memory is rejected",
			mutate: func(o map[string]any) { resourceMetric(o, 1)["resourceName"] = "ephemeral-storage" },
			want:   []string{`spec.resourceMetrics[1].resourceName: Unsupported value: "ephemeral-storage"`},
		},
		{
			name:   "a resource named twice is rejected",
			mutate: func(o map[string]any) { resourceMetric(o, 1)["resourceName"] = "cpu" },
			want:   []string{"spec.resourceMetrics[1]: Duplicate value"},
		},
		{
			name:   "a zero resource averageValue is rejected",
			mutate: func(o map[string]any) { resourceMetric(o, 1)["averageValue"] = "0" },
			want:   []string{"spec.resourceMetrics[1].averageValue: Invalid value", "averageValue must be positive"},
		},
		{
			name:   "a negative custom averageValue is rejected",
			mutate: func(o map[string]any) { customMetric(o, 0)["averageValue"] = "-1" },
			want:   []string{"spec.customMetrics[0].averageValue: Invalid value", "averageValue must be positive"},
		},
		{
			name:   "an integer custom averageValue is admitted",
			mutate: func(o map[string]any) { customMetric(o, 0)["averageValue"] = int64(2000) },
		},
		{
			name:   "a malformed quantity is rejected by the schema pattern",
			mutate: func(o map[string]any) { customMetric(o, 0)["averageValue"] = "lots" },
			want:   []string{"spec.customMetrics[0].averageValue: Invalid value"},
		},
		{
			name:   "custom metrics have no utilization target",
			mutate: func(o map[string]any) { customMetric(o, 0)["averageUtilization"] = int64(50) },
			want:   []string{"spec.customMetrics[0].averageUtilization: Forbidden: unknown field"},
		},
		{
			name:   "an empty custom metric name is rejected",
			mutate: func(o map[string]any) { customMetric(o, 0)["metricName"] = "" },
			want:   []string{"spec.customMetrics[0].metricName: Invalid value"},
		},
		{
			name: "a custom metric named twice is rejected",
			mutate: func(o map[string]any) {
				spec(o)["customMetrics"] = append(spec(o)["customMetrics"].([]any), map[string]any{"metricName": "zdns_vanguard_qps", "averageValue": "1"})
			},
			want: []string{"spec.customMetrics[1]: Duplicate value"},
		},
		{
			name: "a custom metric with a label selector is admitted",
			mutate: func(o map[string]any) {
				customMetric(o, 0)["selector"] = map[string]any{"matchLabels": map[string]any{"view": "default"}}
			},
		},
		{
			name: "the autoscaling/v2 default behavior is admitted",
			mutate: func(o map[string]any) {
				spec(o)["behavior"] = map[string]any{
					"scaleUp": map[string]any{"stabilizationWindowSeconds": int64(0), "selectPolicy": "Max", "tolerance": "0.1", "policies": []any{
						map[string]any{"type": "Percent", "value": int64(100), "periodSeconds": int64(15)},
						map[string]any{"type": "Pods", "value": int64(4), "periodSeconds": int64(15)},
					}},
					"scaleDown": map[string]any{"stabilizationWindowSeconds": int64(300), "tolerance": int64(0), "policies": []any{
						map[string]any{"type": "Percent", "value": int64(100), "periodSeconds": int64(15)},
					}},
				}
			},
		},
		{
			name: "behavior bounds: window over 3600 s, unknown selectPolicy, policy value 0, period over 1800 s, negative tolerance",
			mutate: func(o map[string]any) {
				spec(o)["behavior"] = map[string]any{"scaleDown": map[string]any{
					"stabilizationWindowSeconds": int64(3601), "selectPolicy": "Avg", "tolerance": "-0.1",
					"policies": []any{map[string]any{"type": "Replicas", "value": int64(0), "periodSeconds": int64(1801)}},
				}}
			},
			want: []string{
				"spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601",
				`spec.behavior.scaleDown.selectPolicy: Unsupported value: "Avg"`,
				`spec.behavior.scaleDown.policies[0].type: Unsupported value: "Replicas"`,
				"spec.behavior.scaleDown.policies[0].value: Invalid value: 0",
				"spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801",
				"spec.behavior.scaleDown.tolerance: Invalid value", "tolerance must be >= 0",
			},
		},
	}
	runAdmissionTable(t, tests)
}

// A full status, with every history list at its bound, passes the schema and fits the CEL budget.
func TestStatusAtHistoryBoundsIsAdmitted(t *testing.T) {
	a := newAdmitter(t)
	obj := example(t)
	recs := make([]any, 1000)
	for i := range recs {
		recs[i] = map[string]any{"replicas": int64(3), "timestamp": "2026-01-02T03:04:05Z"}
	}
	events := make([]any, 500)
	for i := range events {
		events[i] = map[string]any{"replicaChange": int64(1), "timestamp": "2026-01-02T03:04:05Z"}
	}
	obj["status"] = map[string]any{
		"currentReplicas": int64(3), "desiredReplicas": int64(3), "reference": "Deployment/vg1-vanguard",
		"recommendations": recs, "scaleEvents": map[string]any{"scaleUp": events, "scaleDown": events},
	}
	if errs := a.admit(t, obj); len(errs) > 0 {
		t.Fatalf("rejected:\n%v", errs.ToAggregate())
	}
	obj["status"].(map[string]any)["recommendations"] = append(recs, recs[0])
	if errs := a.admit(t, obj); !strings.Contains(errs.ToAggregate().Error(), "status.recommendations: Too many: 1001") {
		t.Errorf("1001 recommendations: got %v, want Too many", errs.ToAggregate())
	}
}
