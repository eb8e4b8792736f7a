package crdcheck

import (
	"fmt"
	"strings"
	"testing"
)

// labels returns a matchLabels map of n entries.
func labels(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("l%d", i)] = "v"
	}
	return m
}

// expressions returns n matchExpressions, each In with one value.
func expressions(n int) []any {
	var out []any
	for i := range n {
		out = append(out, map[string]any{"key": fmt.Sprintf("l%d", i), "operator": "In", "values": []any{"v"}})
	}
	return out
}

// withSelector sets the selector of the example's custom metric.
func withSelector(sel map[string]any) func(map[string]any) {
	return func(o map[string]any) { customMetric(o, 0)["selector"] = sel }
}

// withBehavior sets spec.behavior.
func withBehavior(b map[string]any) func(map[string]any) {
	return func(o map[string]any) { spec(o)["behavior"] = b }
}

// TestAdmissionAsStrictAsUpstream: what the autoscaling/v2 HPA rejects at admission
// (pkg/apis/autoscaling/validation of Kubernetes 1.36), the PodAutoscaler rejects too, naming
// the field: names that are path segments of the metrics APIs, DNS-1123 container names,
// apiVersions with at most one '/', and non-empty policy lists. The same specs as HPAs are
// sent to a real kube-apiserver in test/e2e (TestPodAutoscalerRejectsWhatTheHPARejects).
func TestAdmissionAsStrictAsUpstream(t *testing.T) {
	object := func(described map[string]any) func(map[string]any) {
		return onlyMetric("objectMetrics", objectMetric(described, "Value", "value", "1"))
	}
	container := func(name string) func(map[string]any) {
		return onlyMetric("containerResourceMetrics", containerMetric(name, "Utilization", "averageUtilization", int64(50)))
	}
	tests := []admissionCase{
		{
			name:   "a described object's name with '/' is rejected on describedObject.name",
			mutate: object(map[string]any{"kind": "Service", "name": "web/x"}),
			want:   []string{"spec.objectMetrics[0].describedObject.name: Invalid value", "name may not be '.' or '..' and may not contain '/' or '%'"},
		},
		{
			name:   "a described object's kind with '/' is rejected on describedObject.kind",
			mutate: object(map[string]any{"kind": "apps/Deployment", "name": "web"}),
			want:   []string{"spec.objectMetrics[0].describedObject.kind: Invalid value", "kind may not be '.' or '..'"},
		},
		{
			name:   "a described object named '..' is rejected",
			mutate: object(map[string]any{"kind": "Service", "name": ".."}),
			want:   []string{"spec.objectMetrics[0].describedObject.name: Invalid value"},
		},
		{
			name:   "a described object's apiVersion with two '/' is rejected on apiVersion",
			mutate: object(map[string]any{"apiVersion": "apps/v1/x", "kind": "Deployment", "name": "web"}),
			want:   []string{"spec.objectMetrics[0].describedObject.apiVersion: Invalid value", "at most one '/'"},
		},
		{
			name:   "a custom metricName with '/' is rejected on metricName",
			mutate: func(o map[string]any) { customMetric(o, 0)["metricName"] = "zdns/qps" },
			want:   []string{"spec.customMetrics[0].metricName: Invalid value", "metricName may not be '.' or '..' and may not contain '/' or '%'"},
		},
		{
			name:   "a custom metricName with '%' is rejected on metricName",
			mutate: func(o map[string]any) { customMetric(o, 0)["metricName"] = "qps%2F" },
			want:   []string{"spec.customMetrics[0].metricName: Invalid value"},
		},
		{
			name:   "an Object metricName with '/' is rejected on metricName",
			mutate: onlyMetric("objectMetrics", map[string]any{"describedObject": web, "metricName": "a/b", "targetType": "Value", "value": "1"}),
			want:   []string{"spec.objectMetrics[0].metricName: Invalid value"},
		},
		{
			name:   "an External metricName '.' is rejected on metricName",
			mutate: onlyMetric("externalMetrics", map[string]any{"metricName": ".", "targetType": "Value", "value": "1"}),
			want:   []string{"spec.externalMetrics[0].metricName: Invalid value"},
		},
		{
			name:   "a scaleTargetName with '/' is rejected on scaleTargetName",
			mutate: func(o map[string]any) { spec(o)["scaleTargetName"] = "a/b" },
			want:   []string{"spec.scaleTargetName: Invalid value", "scaleTargetName may not be '.' or '..'"},
		},
		{
			name:   "a container that is not a DNS-1123 label (upper case) is rejected on container",
			mutate: container("App"),
			want:   []string{"spec.containerResourceMetrics[0].container: Invalid value", "container must be a DNS-1123 label"},
		},
		{
			name:   "a container with '_' is rejected on container",
			mutate: container("my_app"),
			want:   []string{"spec.containerResourceMetrics[0].container: Invalid value"},
		},
		{
			name:   "a container ending in '-' is rejected on container",
			mutate: container("app-"),
			want:   []string{"spec.containerResourceMetrics[0].container: Invalid value"},
		},
		{
			name:   "an empty scaleUp policy list is rejected (upstream: at least one), not read as unset",
			mutate: withBehavior(map[string]any{"scaleUp": map[string]any{"policies": []any{}}}),
			want:   []string{"spec.behavior.scaleUp.policies: Invalid value", "should have at least 1 items"},
		},
		{
			name:   "an empty scaleDown policy list is rejected",
			mutate: withBehavior(map[string]any{"scaleDown": map[string]any{"selectPolicy": "Disabled", "policies": []any{}}}),
			want:   []string{"spec.behavior.scaleDown.policies: Invalid value"},
		},
		// What upstream accepts stays accepted.
		{name: "a metricName with dots and dashes is admitted", mutate: func(o map[string]any) { customMetric(o, 0)["metricName"] = "http.requests-per-second" }},
		{name: "a metricName of three dots is admitted", mutate: func(o map[string]any) { customMetric(o, 0)["metricName"] = "..." }},
		{name: "a described object in apps/v1 is admitted", mutate: object(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})},
		{name: "a container name with digits and '-' is admitted", mutate: container("app-2")},
		{name: "scaleUp without policies is admitted (the default policies apply)", mutate: withBehavior(map[string]any{"scaleUp": map[string]any{"stabilizationWindowSeconds": int64(0)}})},
	}
	runAdmissionTable(t, tests)
}

// TestAdmissionBoundsSelectors: a metric selector is bounded as Kubernetes bounds labels (32
// matchLabels and 32 matchExpressions, keys of 317 characters, values of 63, 128 values per
// expression, the label library's operators, values present as the operator needs). Upstream has
// no bound; podpilot turns each entry into a PromQL matcher every round, so a bound keeps a
// query's size in proportion to what a person writes.
func TestAdmissionBoundsSelectors(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	values := func(n, length int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", length, i)
		}
		return out
	}
	expr := func(key, op string, vals []any) map[string]any {
		e := map[string]any{"key": key, "operator": op}
		if vals != nil {
			e["values"] = vals
		}
		return map[string]any{"matchExpressions": []any{e}}
	}
	const tooMany = "must have at most 32 items"
	tests := []admissionCase{
		{name: "32 matchLabels and 32 matchExpressions are admitted", mutate: withSelector(map[string]any{"matchLabels": labels(32), "matchExpressions": expressions(32)})},
		{name: "keys of 317 characters, values of 63 and 128 values are admitted", mutate: withSelector(map[string]any{
			"matchLabels":      map[string]any{long("k", 253) + "/" + long("n", 63): long("v", 63)},
			"matchExpressions": []any{map[string]any{"key": long("k", 317), "operator": "NotIn", "values": values(128, 63)}},
		})},
		{name: "Exists and DoesNotExist without values are admitted", mutate: withSelector(map[string]any{"matchExpressions": []any{
			map[string]any{"key": "a", "operator": "Exists"}, map[string]any{"key": "b", "operator": "DoesNotExist", "values": []any{}},
		}})},
		{name: "33 matchLabels are rejected on matchLabels", mutate: withSelector(map[string]any{"matchLabels": labels(33)}),
			want: []string{"spec.customMetrics[0].selector.matchLabels: Too many: 33: " + tooMany}},
		{name: "5,000 matchLabels (upstream admits them) are rejected on matchLabels", mutate: withSelector(map[string]any{"matchLabels": labels(5000)}),
			want: []string{"spec.customMetrics[0].selector.matchLabels: Too many: 5000"}},
		{name: "33 matchExpressions of an External metric are rejected on matchExpressions",
			mutate: onlyMetric("externalMetrics", externalMetric("Value", "value", "1", "selector", map[string]any{"matchExpressions": expressions(33)})),
			want:   []string{"spec.externalMetrics[0].selector.matchExpressions: Too many: 33: " + tooMany}},
		{name: "33 matchLabels of an Object metric are rejected on matchLabels",
			mutate: onlyMetric("objectMetrics", objectMetric(web, "Value", "value", "1", "selector", map[string]any{"matchLabels": labels(33)})),
			want:   []string{"spec.objectMetrics[0].selector.matchLabels: Too many: 33"}},
		{name: "a matchLabels value of 64 characters is rejected on matchLabels", mutate: withSelector(map[string]any{"matchLabels": map[string]any{"queue": long("v", 64)}}),
			want: []string{"spec.customMetrics[0].selector.matchLabels: Invalid value", "values at most 63"}},
		{name: "a matchLabels key of 318 characters is rejected on matchLabels", mutate: withSelector(map[string]any{"matchLabels": map[string]any{long("k", 318): "v"}}),
			want: []string{"spec.customMetrics[0].selector.matchLabels: Invalid value", "keys may have at most 317"}},
		{name: "a matchExpressions key of 318 characters is rejected on its key", mutate: withSelector(expr(long("k", 318), "Exists", nil)),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].key: Too long"}},
		{name: "129 values are rejected on values", mutate: withSelector(expr("queue", "In", values(129, 2))),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].values: Too many: 129"}},
		{name: "a value of 64 characters is rejected on that value", mutate: withSelector(expr("queue", "In", values(1, 64))),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].values[0]: Too long"}},
		{name: "In without values is rejected on values", mutate: withSelector(expr("queue", "In", nil)),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].values: Invalid value", "non-empty for In and NotIn"}},
		{name: "Exists with values is rejected on values", mutate: withSelector(expr("queue", "Exists", []any{"a"})),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].values: Invalid value", "empty for Exists and DoesNotExist"}},
		{name: "an operator the label library does not know is rejected on operator", mutate: withSelector(expr("queue", "Gt", []any{"3"})),
			want: []string{"spec.customMetrics[0].selector.matchExpressions[0].operator: Unsupported value"}},
	}
	runAdmissionTable(t, tests)
}

// admissionCase is the seed example changed by mutate, and the substrings of the aggregated
// error it is rejected with; none means admitted.
type admissionCase struct {
	name   string
	mutate func(obj map[string]any)
	want   []string
}

// runAdmissionTable admits each case's object and checks the outcome.
func runAdmissionTable(t *testing.T, tests []admissionCase) {
	t.Helper()
	a := newAdmitter(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := example(t)
			tc.mutate(obj)
			errs := a.admit(t, obj)
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("rejected, want admitted:\n%v", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("admitted, want errors containing %q", tc.want)
			}
			got := errs.ToAggregate().Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("errors lack %q; got:\n%s", w, got)
				}
			}
		})
	}
}
