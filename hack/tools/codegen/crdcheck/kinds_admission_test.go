package crdcheck

import "testing"

// onlyMetric replaces the example's metrics with one metric in list.
func onlyMetric(list string, metric map[string]any) func(map[string]any) {
	return func(o map[string]any) {
		delete(spec(o), "resourceMetrics")
		delete(spec(o), "customMetrics")
		spec(o)[list] = []any{metric}
	}
}

func externalMetric(targetType string, kv ...any) map[string]any {
	m := map[string]any{"metricName": "jobs_queue_length", "targetType": targetType}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func objectMetric(described map[string]any, targetType string, kv ...any) map[string]any {
	m := externalMetric(targetType, kv...)
	m["metricName"], m["describedObject"] = "requests_in_flight", described
	return m
}

func containerMetric(container, targetType string, kv ...any) map[string]any {
	m := map[string]any{"resourceName": "cpu", "container": container, "targetType": targetType}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

var web = map[string]any{"apiVersion": "v1", "kind": "Service", "name": "web"}

// TestAdmissionOfTheNewMetricKinds: the Object, External and ContainerResource kinds are admitted
// alone, and a bad target, value, described object or container is rejected naming the field.
func TestAdmissionOfTheNewMetricKinds(t *testing.T) {
	tests := []admissionCase{
		{name: "an External Value metric alone is admitted", mutate: onlyMetric("externalMetrics", externalMetric("Value", "value", "100"))},
		{name: "an External AverageValue metric with a selector alone is admitted", mutate: onlyMetric("externalMetrics",
			externalMetric("AverageValue", "averageValue", "10", "selector", map[string]any{"matchLabels": map[string]any{"queue": "jobs"}}))},
		{name: "an Object metric alone is admitted", mutate: onlyMetric("objectMetrics", objectMetric(web, "Value", "value", "100"))},
		{name: "an Object metric's apiVersion is optional", mutate: onlyMetric("objectMetrics",
			objectMetric(map[string]any{"kind": "Service", "name": "web"}, "AverageValue", "averageValue", "500m"))},
		{name: "a ContainerResource metric alone is admitted", mutate: onlyMetric("containerResourceMetrics",
			containerMetric("app", "Utilization", "averageUtilization", int64(50)))},
		{
			name:   "an External metric with a Utilization target is rejected on targetType",
			mutate: onlyMetric("externalMetrics", externalMetric("Utilization", "averageValue", "1")),
			want:   []string{`spec.externalMetrics[0].targetType: Unsupported value: "Utilization"`},
		},
		{
			name:   "an External Value target without value is rejected on value",
			mutate: onlyMetric("externalMetrics", externalMetric("Value", "averageValue", "1")),
			want: []string{"spec.externalMetrics[0].value: Invalid value", "value is required when targetType is Value",
				"spec.externalMetrics[0].averageValue: Invalid value", "averageValue must not be set when targetType is Value"},
		},
		{
			name:   "an External AverageValue of 0 is rejected",
			mutate: onlyMetric("externalMetrics", externalMetric("AverageValue", "averageValue", "0")),
			want:   []string{"spec.externalMetrics[0].averageValue: Invalid value", "averageValue must be positive"},
		},
		{
			name:   "an empty external metric name is rejected",
			mutate: onlyMetric("externalMetrics", map[string]any{"metricName": "", "targetType": "Value", "value": "1"}),
			want:   []string{"spec.externalMetrics[0].metricName: Invalid value"},
		},
		{
			name:   "an Object metric without a described object is rejected",
			mutate: onlyMetric("objectMetrics", map[string]any{"metricName": "q", "targetType": "Value", "value": "1"}),
			want:   []string{"spec.objectMetrics[0].describedObject: Required value"},
		},
		{
			name:   "a described object without kind and name is rejected on both",
			mutate: onlyMetric("objectMetrics", objectMetric(map[string]any{"apiVersion": "v1"}, "Value", "value", "1")),
			want:   []string{"spec.objectMetrics[0].describedObject.kind: Required value", "spec.objectMetrics[0].describedObject.name: Required value"},
		},
		{
			name:   "an Object Value of 0 is rejected",
			mutate: onlyMetric("objectMetrics", objectMetric(web, "Value", "value", "0")),
			want:   []string{"spec.objectMetrics[0].value: Invalid value", "value must be positive"},
		},
		{
			name:   "an Object AverageValue target with value is rejected on value",
			mutate: onlyMetric("objectMetrics", objectMetric(web, "AverageValue", "averageValue", "1", "value", "1")),
			want:   []string{"spec.objectMetrics[0].value: Invalid value", "value must not be set when targetType is AverageValue"},
		},
		{
			name:   "an empty container name is rejected",
			mutate: onlyMetric("containerResourceMetrics", containerMetric("", "Utilization", "averageUtilization", int64(50))),
			want:   []string{"spec.containerResourceMetrics[0].container: Invalid value"},
		},
		{
			name:   "a ContainerResource metric with a Value target is rejected on targetType",
			mutate: onlyMetric("containerResourceMetrics", containerMetric("app", "Value", "averageValue", "1")),
			want:   []string{`spec.containerResourceMetrics[0].targetType: Unsupported value: "Value"`},
		},
		{
			name:   "a ContainerResource Utilization target without averageUtilization is rejected on that field",
			mutate: onlyMetric("containerResourceMetrics", containerMetric("app", "Utilization")),
			want:   []string{"spec.containerResourceMetrics[0].averageUtilization: Invalid value", "averageUtilization is required when targetType is Utilization"},
		},
		{
			name: "the same container and resource twice is rejected",
			mutate: func(o map[string]any) {
				onlyMetric("containerResourceMetrics", containerMetric("app", "Utilization", "averageUtilization", int64(50)))(o)
				spec(o)["containerResourceMetrics"] = append(spec(o)["containerResourceMetrics"].([]any),
					containerMetric("app", "AverageValue", "averageValue", "100m"))
			},
			want: []string{"spec.containerResourceMetrics[1]: Duplicate value"},
		},
		{
			name: "one container's cpu and memory are admitted",
			mutate: func(o map[string]any) {
				onlyMetric("containerResourceMetrics", containerMetric("app", "Utilization", "averageUtilization", int64(50)))(o)
				mem := containerMetric("app", "AverageValue", "averageValue", "64Mi")
				mem["resourceName"] = "memory"
				spec(o)["containerResourceMetrics"] = append(spec(o)["containerResourceMetrics"].([]any), mem)
			},
		},
	}
	runAdmissionTable(t, tests)
}

// Every metric list at its bound, each metric with a selector, and a status with every current
// metric fit the CEL budget.
func TestEveryMetricListAtItsBoundIsAdmitted(t *testing.T) {
	a := newAdmitter(t)
	obj := example(t)
	sel := map[string]any{"matchLabels": map[string]any{"queue": "jobs"}}
	var objects, externals, containers, customs, statuses []any
	for i := range 10 {
		name := "m" + string(rune('a'+i))
		objects = append(objects, objectMetric(web, "AverageValue", "averageValue", "1", "selector", sel))
		externals = append(externals, externalMetric("Value", "value", "1", "selector", sel))
		containers = append(containers, containerMetric(name, "Utilization", "averageUtilization", int64(50)))
		customs = append(customs, map[string]any{"metricName": name, "averageValue": "1", "selector": sel})
	}
	spec(obj)["objectMetrics"], spec(obj)["externalMetrics"], spec(obj)["containerResourceMetrics"], spec(obj)["customMetrics"] =
		objects, externals, containers, customs
	for range 42 {
		statuses = append(statuses, map[string]any{"type": "Object", "name": "m", "describedObject": "Service/web", "value": "1"})
	}
	obj["status"] = map[string]any{"currentMetrics": statuses}
	if errs := a.admit(t, obj); len(errs) > 0 {
		t.Fatalf("rejected:\n%v", errs.ToAggregate())
	}
}
