package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// hpaYAML is an autoscaling/v2 HPA named name scaling Deployment web, with spec (metrics and
// behavior) appended.
func hpaYAML(name, spec string) string {
	return fmt.Sprintf(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
%s`, name, spec)
}

// ppaYAML is a PodAutoscaler named name scaling Deployment web, with spec appended.
func ppaYAML(name, spec string) string {
	return string(framework.PodAutoscalerYAML(name, "deployment", "web", 1, 3, spec))
}

// TestPodAutoscalerRejectsWhatTheHPARejects sends each spec as a PodAutoscaler and as the
// equivalent autoscaling/v2 HPA to the same kube-apiserver: what the HPA's validation rejects,
// the PodAutoscaler's CRD rejects too, naming the field; what it admits, both admit.
func TestPodAutoscalerRejectsWhatTheHPARejects(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-upstream")
	object := func(described string) (string, string) {
		return "  objectMetrics: [{describedObject: " + described + ", metricName: q, targetType: Value, value: \"1\"}]\n",
			"  metrics: [{type: Object, object: {describedObject: " + described + ", metric: {name: q}, target: {type: Value, value: \"1\"}}}]\n"
	}
	pods := func(metric string) (string, string) {
		return "  customMetrics: [{metricName: \"" + metric + "\", averageValue: \"1\"}]\n",
			"  metrics: [{type: Pods, pods: {metric: {name: \"" + metric + "\"}, target: {type: AverageValue, averageValue: \"1\"}}}]\n"
	}
	container := func(name string) (string, string) {
		return "  containerResourceMetrics: [{resourceName: cpu, container: \"" + name + "\", targetType: Utilization, averageUtilization: 50}]\n",
			"  metrics: [{type: ContainerResource, containerResource: {name: cpu, container: \"" + name + "\", target: {type: Utilization, averageUtilization: 50}}}]\n"
	}
	emptyScaleUp := func() (string, string) {
		p, h := pods("qps")
		return p + "  behavior: {scaleUp: {policies: []}}\n", h + "  behavior: {scaleUp: {policies: []}}\n"
	}
	cases := []struct {
		name        string
		spec        func() (string, string)
		field, hpaF string
	}{
		{"an Object metric's described object named with '/'", func() (string, string) { return object("{apiVersion: v1, kind: Service, name: web/x}") },
			"spec.objectMetrics[0].describedObject.name", "spec.metrics[0].object.describedObject.name"},
		{"an Object metric's described kind with '/'", func() (string, string) { return object("{apiVersion: v1, kind: v1/Service, name: web}") },
			"spec.objectMetrics[0].describedObject.kind", "spec.metrics[0].object.describedObject.kind"},
		{"an Object metric's described apiVersion with two '/'", func() (string, string) { return object("{apiVersion: apps/v1/x, kind: Deployment, name: web}") },
			"spec.objectMetrics[0].describedObject.apiVersion", "spec.metrics[0].object.describedObject.apiVersion"},
		{"a custom (Pods) metric name with '/'", func() (string, string) { return pods("zdns/qps") },
			"spec.customMetrics[0].metricName", "spec.metrics[0].pods.metric.name"},
		{"a custom (Pods) metric name with '%'", func() (string, string) { return pods("qps%2F") },
			"spec.customMetrics[0].metricName", "spec.metrics[0].pods.metric.name"},
		{"a ContainerResource container that is not a DNS-1123 label", func() (string, string) { return container("App_1") },
			"spec.containerResourceMetrics[0].container", "spec.metrics[0].containerResource.container"},
		{"an empty scaleUp policy list", emptyScaleUp, "spec.behavior.scaleUp.policies", "spec.behavior.scaleUp.policies"},
		{"a metric name with dots and dashes", func() (string, string) { return pods("http.requests-total") }, "", ""},
		{"a container name with digits and '-'", func() (string, string) { return container("app-2") }, "", ""},
		{"an Object metric in apps/v1", func() (string, string) { return object("{apiVersion: apps/v1, kind: Deployment, name: web}") }, "", ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ppaSpec, hpaSpec := tc.spec()
			name := fmt.Sprintf("twin-%d", i)
			for _, kind := range []struct{ what, doc, field string }{
				{"HPA", hpaYAML(name, hpaSpec), tc.hpaF},
				{"PodAutoscaler", ppaYAML(name, ppaSpec), tc.field},
			} {
				// Admitted specs are dry-run: no HPA controller or autoscaler acts on them.
				_, err := cluster.ApplyErr(ctx, ns, []byte(kind.doc), kind.field == "")
				switch {
				case kind.field == "" && err != nil:
					t.Errorf("%s rejected, want admitted: %v\n%s", kind.what, err, kind.doc)
				case kind.field != "" && err == nil:
					t.Errorf("%s admitted, want rejected on %s:\n%s", kind.what, kind.field, kind.doc)
				case kind.field != "" && !strings.Contains(err.Error(), kind.field):
					t.Errorf("%s rejection does not name %s: %v", kind.what, kind.field, err)
				}
			}
		})
	}
}

// TestPodAutoscalerSelectorBounds: a metric selector beyond podpilot's bounds (entries, key and
// value lengths, values per expression, operators) is rejected naming the field, where the HPA
// admits every one of them (a deliberate difference, docs/podautoscaler.md; the test logs what
// the HPA did); the largest selector within the bounds is admitted.
func TestPodAutoscalerSelectorBounds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-bounds")
	labels := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("l%d: v", i)
		}
		return "{matchLabels: {" + strings.Join(parts, ", ") + "}}"
	}
	expressions := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("{key: l%d, operator: Exists}", i)
		}
		return "{matchExpressions: [" + strings.Join(parts, ", ") + "]}"
	}
	in := func(n, length int) string {
		values := make([]string, n)
		for i := range values {
			values[i] = fmt.Sprintf("%0*d", length, i)
		}
		return "{matchExpressions: [{key: queue, operator: In, values: [\"" + strings.Join(values, "\", \"") + "\"]}]}"
	}
	field := "spec.externalMetrics[0].selector."
	tests := []struct {
		name, selector, field string
	}{
		{"5,000 matchLabels", labels(5000), field + "matchLabels"},
		{"33 matchExpressions", expressions(33), field + "matchExpressions"},
		{"a 1 MiB label value", "{matchLabels: {queue: " + strings.Repeat("a", 1<<20) + "}}", field + "matchLabels"},
		{"a 318-character key", "{matchExpressions: [{key: " + strings.Repeat("k", 318) + ", operator: Exists}]}", field + "matchExpressions[0].key"},
		{"an In list of 20,000 values", in(20000, 8), field + "matchExpressions[0].values"},
		{"a 64-character value in an In list", in(1, 64), field + "matchExpressions[0].values[0]"},
		{"In without values", "{matchExpressions: [{key: queue, operator: In}]}", field + "matchExpressions[0].values"},
		{"Exists with values", "{matchExpressions: [{key: queue, operator: Exists, values: [a]}]}", field + "matchExpressions[0].values"},
		{"an operator the label library does not know", "{matchExpressions: [{key: queue, operator: Gt, values: [\"3\"]}]}", field + "matchExpressions[0].operator"},
		{"32 matchLabels", labels(32), ""},
		{"the largest selector within the bounds", largestValidSelector(), ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ppa := "  externalMetrics: [{metricName: q, selector: " + tc.selector + ", targetType: Value, value: \"1\"}]\n"
			hpa := "  metrics: [{type: External, external: {metric: {name: q, selector: " + tc.selector + "}, target: {type: Value, value: \"1\"}}}]\n"
			name := fmt.Sprintf("case-%d", i)
			_, hpaErr := cluster.ApplyErr(ctx, ns, []byte(hpaYAML(name, hpa)), true)
			t.Logf("the HPA with %s: admitted=%v %.200v", tc.name, hpaErr == nil, hpaErr)
			_, err := cluster.ApplyErr(ctx, ns, []byte(ppaYAML(name, ppa)), true)
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("the PodAutoscaler with %s is rejected: %.500v", tc.name, err)
			case tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field)):
				t.Errorf("the PodAutoscaler with %s: %.500v, want a rejection naming %s", tc.name, err, tc.field)
			case err != nil:
				t.Logf("rejected: %.300s", err)
			}
		})
	}
}

// largestValidSelector is the largest metric selector podpilot admits whose keys are also
// Prometheus label names: 32 matchLabels with 63-character keys and values, 32 matchExpressions
// with 128 values of 63 characters each (about 270 KB of YAML).
func largestValidSelector() string {
	name := func(prefix string, i int) string { return fmt.Sprintf("%s%0*d", prefix, 62, i) }
	labels := make([]string, 32)
	exprs := make([]string, 32)
	for i := range 32 {
		labels[i] = name("l", i) + ": " + name("v", i)
		values := make([]string, 128)
		for j := range values {
			values[j] = name("v", i*128+j)
		}
		exprs[i] = "{key: " + name("k", i) + ", operator: In, values: [" + strings.Join(values, ", ") + "]}"
	}
	return "{matchLabels: {" + strings.Join(labels, ", ") + "}, matchExpressions: [" + strings.Join(exprs, ", ") + "]}"
}

// TestPodAutoscalerIsStricterThanTheHPAWhereDocumented sends each case where admission is
// deliberately stricter than the HPA's (docs/podautoscaler.md) to the same kube-apiserver as a
// PodAutoscaler and as the equivalent autoscaling/v2 HPA: the HPA is admitted, the PodAutoscaler
// rejected naming the field.
func TestPodAutoscalerIsStricterThanTheHPAWhereDocumented(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-stricter")
	custom := func(names ...string) (string, string) {
		var ppa, hpa []string
		for _, n := range names {
			ppa = append(ppa, "{metricName: "+n+", averageValue: \"1\"}")
			hpa = append(hpa, "{type: Pods, pods: {metric: {name: "+n+"}, target: {type: AverageValue, averageValue: \"1\"}}}")
		}
		return "  customMetrics: [" + strings.Join(ppa, ", ") + "]\n", "  metrics: [" + strings.Join(hpa, ", ") + "]\n"
	}
	many := func(n int) []string {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("q%d", i)
		}
		return names
	}
	policies := func(n int) string {
		p := make([]string, n)
		for i := range p {
			p[i] = fmt.Sprintf("{type: Pods, value: %d, periodSeconds: 60}", i+1)
		}
		return "  behavior: {scaleUp: {policies: [" + strings.Join(p, ", ") + "]}}\n"
	}
	cases := []struct {
		name string
		// ppa and hpa are the two documents.
		ppa, hpa string
		// field is what the PodAutoscaler's rejection names.
		field string
	}{
		{name: "no metric at all (the HPA defaults to cpu at 80%)", ppa: ppaYAML("none", ""), hpa: hpaYAML("none", ""),
			field: "at least one metric must be set"},
		{name: "a ReplicaSet scale target",
			ppa:   string(framework.PodAutoscalerYAML("replicaset", "replicaset", "web", 1, 3, "  customMetrics: [{metricName: q, averageValue: \"1\"}]\n")),
			hpa:   strings.Replace(hpaYAML("replicaset", "  metrics: [{type: Pods, pods: {metric: {name: q}, target: {type: AverageValue, averageValue: \"1\"}}}]\n"), "kind: Deployment", "kind: ReplicaSet", 1),
			field: "spec.scaleTargetKind"},
		{name: "an ephemeral-storage Resource metric",
			ppa:   ppaYAML("storage", "  resourceMetrics: [{resourceName: ephemeral-storage, targetType: AverageValue, averageValue: 1Gi}]\n"),
			hpa:   hpaYAML("storage", "  metrics: [{type: Resource, resource: {name: ephemeral-storage, target: {type: AverageValue, averageValue: 1Gi}}}]\n"),
			field: "spec.resourceMetrics[0].resourceName"},
		{name: "a Resource metric with targetType Value",
			ppa:   ppaYAML("value", "  resourceMetrics: [{resourceName: cpu, targetType: Value, averageValue: 500m}]\n"),
			hpa:   hpaYAML("value", "  metrics: [{type: Resource, resource: {name: cpu, target: {type: Value, averageValue: 500m}}}]\n"),
			field: "spec.resourceMetrics[0].targetType"},
		{name: "an Object metric with targetType Value and averageValue only",
			ppa:   ppaYAML("object", "  objectMetrics: [{describedObject: {apiVersion: v1, kind: Service, name: web}, metricName: q, targetType: Value, averageValue: \"1\"}]\n"),
			hpa:   hpaYAML("object", "  metrics: [{type: Object, object: {describedObject: {apiVersion: v1, kind: Service, name: web}, metric: {name: q}, target: {type: Value, averageValue: \"1\"}}}]\n"),
			field: "spec.objectMetrics[0].value"},
		{name: "11 custom metrics", field: "spec.customMetrics"},
		{name: "the same custom metric twice", field: "spec.customMetrics"},
		{name: "a 254-character metric name", field: "spec.customMetrics[0].metricName"},
		{name: "11 scale-up policies", field: "spec.behavior.scaleUp.policies"},
	}
	fill := func(i int, ppaSpec, hpaSpec string) {
		name := fmt.Sprintf("stricter-%d", i)
		cases[i].ppa, cases[i].hpa = ppaYAML(name, ppaSpec), hpaYAML(name, hpaSpec)
	}
	p, h := custom(many(11)...)
	fill(5, p, h)
	p, h = custom("q", "q")
	fill(6, p, h)
	p, h = custom(strings.Repeat("q", 254))
	fill(7, p, h)
	p, h = custom("q")
	fill(8, p+policies(11), h+policies(11))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cluster.ApplyErr(ctx, ns, []byte(tc.hpa), true); err != nil {
				t.Errorf("the HPA is rejected, want admitted: %.500v\n%s", err, tc.hpa)
			}
			_, err := cluster.ApplyErr(ctx, ns, []byte(tc.ppa), true)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("the PodAutoscaler: %.500v, want a rejection naming %s\n%s", err, tc.field, tc.ppa)
			}
		})
	}
}
