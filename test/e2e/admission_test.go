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

// TestPodAutoscalerSelectorBounds: a metric selector with more than 32 matchLabels is
// rejected naming the field, though the HPA admits it (a deliberate difference,
// docs/podautoscaler.md); 32 are admitted.
func TestPodAutoscalerSelectorBounds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-bounds")
	labels := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("l%d: v", i)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	external := func(n int) (string, string) {
		return "  externalMetrics: [{metricName: q, selector: {matchLabels: " + labels(n) + "}, targetType: Value, value: \"1\"}]\n",
			"  metrics: [{type: External, external: {metric: {name: q, selector: {matchLabels: " + labels(n) + "}}, target: {type: Value, value: \"1\"}}}]\n"
	}
	ppa, hpa := external(5000)
	if _, err := cluster.ApplyErr(ctx, ns, []byte(hpaYAML("many", hpa)), true); err != nil {
		t.Errorf("the HPA with 5,000 matchLabels is rejected: %v", err)
	}
	_, err := cluster.ApplyErr(ctx, ns, []byte(ppaYAML("many", ppa)), false)
	if err == nil || !strings.Contains(err.Error(), "spec.externalMetrics[0].selector.matchLabels") {
		t.Errorf("the PodAutoscaler with 5,000 matchLabels: %v, want a rejection naming spec.externalMetrics[0].selector.matchLabels", err)
	}
	ppa, _ = external(32)
	if _, err := cluster.ApplyErr(ctx, ns, []byte(ppaYAML("bound", ppa)), true); err != nil {
		t.Errorf("the PodAutoscaler with 32 matchLabels is rejected: %v", err)
	}
}
