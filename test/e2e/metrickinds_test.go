package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// kindsPodAutoscalerYAML is a PodAutoscaler of a workload with metrics, YAML
// indented under spec (e.g. an externalMetrics list), and no scale-down
// stabilization so that the tests see scale-downs at once.
func kindsPodAutoscalerYAML(name, kind, target string, minReplicas, maxReplicas int, metrics string) []byte {
	return framework.PodAutoscalerYAML(name, kind, target, minReplicas, maxReplicas, "  behavior: {scaleDown: {stabilizationWindowSeconds: 0}}\n"+metrics)
}

// waitCurrentMetric waits until the PodAutoscaler's first current metric is
// of typ and ok accepts it.
func waitCurrentMetric(ctx context.Context, t *testing.T, ns, name string, typ podpilotv1alpha1.MetricSourceType,
	ok func(podpilotv1alpha1.MetricStatus) bool) {
	t.Helper()
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("PodAutoscaler %s shows its %s metric", name, typ), func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, name)
		if err != nil {
			return false, "", err
		}
		done := len(pa.Status.CurrentMetrics) > 0 && pa.Status.CurrentMetrics[0].Type == typ && ok(pa.Status.CurrentMetrics[0])
		return done, describeConditions(pa) + fmt.Sprintf("currentMetrics %+v", pa.Status.CurrentMetrics), nil
	})
}

// TestPodAutoscalerScalesOnExternalMetric: a queue length exported as a gauge
// with a namespace label and no pod label is an external metric (the default
// external rules). Its AverageValue target of 10 per pod scales the
// Deployment to ceil(35/10) = 4 and back to 1; a second queue, left out by
// the metric selector, would ask for maxReplicas if it counted.
func TestPodAutoscalerScalesOnExternalMetric(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-external")
	startWorkload(ctx, t, ns, "worker", 1)
	exp := serveExporter(t)
	exp.SetGauge("jobs_queue_length", map[string]string{"namespace": ns, "queue": "other"}, 1000)
	exp.SetGauge("jobs_queue_length", map[string]string{"namespace": ns, "queue": "jobs"}, 5)
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("external", "deployment", "worker", 1, 6, `  externalMetrics:
  - metricName: jobs_queue_length
    selector: {matchLabels: {queue: jobs}}
    targetType: AverageValue
    averageValue: "10"
`))
	waitPodAutoscalerCondition(ctx, t, ns, "external", "ScalingActive", metav1.ConditionTrue)

	exp.SetGauge("jobs_queue_length", map[string]string{"namespace": ns, "queue": "jobs"}, 35) // ceil(35/10) = 4
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 4)
	waitCurrentMetric(ctx, t, ns, "external", podpilotv1alpha1.ExternalMetricSourceType, func(m podpilotv1alpha1.MetricStatus) bool {
		return m.Name == "jobs_queue_length" && m.Value != nil && m.Value.Cmp(resource.MustParse("35")) == 0 && m.AverageValue != nil
	})
	pa, err := getPodAutoscaler(ctx, t, ns, "external")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(pa.Status.Targets, "/10 (avg)") {
		t.Errorf("targets = %q, want the average against 10 (avg)", pa.Status.Targets)
	}

	exp.SetGauge("jobs_queue_length", map[string]string{"namespace": ns, "queue": "jobs"}, 5) // ceil(5/10) = 1
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 1)
}

// TestPodAutoscalerScalesStatefulSetOnObjectMetric: a gauge labelled with a
// Service's name is served for that Service (the e2e rule file's service
// rule), as custom.metrics.k8s.io/.../services/web/requests_in_flight. Its
// Value target of 100 scales the ready pods by value/100: 250 on 1 pod asks
// for 3 (maxReplicas), 50 on 3 pods for 2, then 1.
func TestPodAutoscalerScalesStatefulSetOnObjectMetric(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-object")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
	if _, err := cluster.Client.AppsV1().StatefulSets(ns).Create(ctx, cluster.StatefulSet("db", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create statefulset: %v", err)
	}
	exp := serveExporter(t)
	inFlight := map[string]string{"namespace": ns, "service": "web"}
	exp.SetGauge("requests_in_flight", inFlight, 100)
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("object", "StatefulSet", "db", 1, 3, `  objectMetrics:
  - describedObject: {apiVersion: v1, kind: Service, name: web}
    metricName: requests_in_flight
    targetType: Value
    value: "100"
`))
	waitCurrentMetric(ctx, t, ns, "object", podpilotv1alpha1.ObjectMetricSourceType, func(m podpilotv1alpha1.MetricStatus) bool {
		return m.DescribedObject == "Service/web" && m.Value != nil && m.Value.Cmp(resource.MustParse("100")) == 0
	})

	exp.SetGauge("requests_in_flight", inFlight, 250) // 2.5 × 1 ready pod → 3
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "StatefulSet", ns, "db", 3)
	exp.SetGauge("requests_in_flight", inFlight, 50) // 0.5 × 3 → 2, then 0.5 × 2 → 1
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "StatefulSet", ns, "db", 1)
}

// sidecarDeployment is cluster.Deployment with a second container, "sidecar",
// requesting 900m cpu beside the app container's 100m: a regular container,
// or with native a restartable init container (a native sidecar).
func sidecarDeployment(name string, replicas int32, native bool) *appsv1.Deployment {
	d := cluster.Deployment(name, replicas)
	sidecar := corev1.Container{
		Name: "sidecar", Image: "registry.invalid/podpilot/fake:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("900m")}},
	}
	if native {
		always := corev1.ContainerRestartPolicyAlways
		sidecar.RestartPolicy = &always
		d.Spec.Template.Spec.InitContainers = append(d.Spec.Template.Spec.InitContainers, sidecar)
		return d
	}
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, sidecar)
	return d
}

// TestPodAutoscalerScalesOnContainerResourceUtilization: pods of an app
// container (100m cpu requested) and a sidecar (900m), the app using 80m. A
// ContainerResource target of 50% on the app container reads 80% and scales
// up to maxReplicas, where the pod-level utilization (80m of 1000m = 8%)
// would scale down. The sidecar is a regular container, then a native one.
func TestPodAutoscalerScalesOnContainerResourceUtilization(t *testing.T) {
	t.Parallel()
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native sidecar %t", native), func(t *testing.T) {
			t.Parallel()
			testContainerResourceUtilization(t, native)
		})
	}
}

func testContainerResourceUtilization(t *testing.T, native bool) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-container")
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, sidecarDeployment("web", 2, native), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "web", 0.08, 64*mi) // the app container: 80% of 100m
	t.Cleanup(usage.Stop)
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("container", "deployment", "web", 1, 4, `  containerResourceMetrics:
  - resourceName: cpu
    container: app
    targetType: Utilization
    averageUtilization: 50
`))
	cluster.WaitReplicas(ctx, t, 4*time.Minute, "Deployment", ns, "web", 4)
	pa, err := getPodAutoscaler(ctx, t, ns, "container")
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Status.CurrentMetrics) != 1 || pa.Status.CurrentMetrics[0].Container != "app" ||
		pa.Status.CurrentMetrics[0].Type != podpilotv1alpha1.ContainerResourceMetricSourceType {
		t.Errorf("currentMetrics = %+v, want the app container's cpu", pa.Status.CurrentMetrics)
	}
	if !strings.HasSuffix(pa.Status.Targets, "/50%") {
		t.Errorf("targets = %q, want a utilization against 50%%", pa.Status.Targets)
	}
}

// TestPodAutoscalerContainerResourceOnAMissingContainerFails: a container
// no pod's metrics list leaves every pod missing, which fails the metric as
// upstream 1.36 does (no metrics for the targeted pods), with its own
// ScalingActive reason, and never scales.
func TestPodAutoscalerContainerResourceOnAMissingContainerFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-nocontainer")
	startWorkload(ctx, t, ns, "web", 2)
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "web", 0.08, 64*mi)
	t.Cleanup(usage.Stop)
	applyPodAutoscaler(ctx, t, ns, kindsPodAutoscalerYAML("nocontainer", "deployment", "web", 1, 4, `  containerResourceMetrics:
  - resourceName: cpu
    container: proxy
    targetType: Utilization
    averageUtilization: 50
`))
	framework.WaitFor(ctx, t, 2*time.Minute, "ScalingActive False FailedGetContainerResourceMetric", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "nocontainer")
		if err != nil {
			return false, "", err
		}
		for _, c := range pa.Status.Conditions {
			if c.Type == "ScalingActive" && c.Status == metav1.ConditionFalse && c.Reason == "FailedGetContainerResourceMetric" &&
				strings.Contains(c.Message, "did not receive metrics for targeted pods") {
				return true, "", nil
			}
		}
		return false, describeConditions(pa), nil
	})
	cluster.HoldReplicas(ctx, t, 5*time.Second, "Deployment", ns, "web", 2)
}

// TestPodAutoscalerInvalidMetricKindsAreRejectedNamingTheField: admission
// (the CRD's schema and CEL rules) rejects a bad spec of the new kinds and
// names the field.
func TestPodAutoscalerInvalidMetricKindsAreRejectedNamingTheField(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-invalid-kinds")
	doc := func(metrics string) string {
		return string(kindsPodAutoscalerYAML("bad", "deployment", "x", 1, 2, metrics))
	}
	expectRejected(ctx, t, ns, []rejection{
		{"an External metric with a Utilization target", doc("  externalMetrics: [{metricName: q, targetType: Utilization, averageValue: \"1\"}]\n"),
			"spec.externalMetrics[0].targetType"},
		{"an External Value target without a value", doc("  externalMetrics: [{metricName: q, targetType: Value, averageValue: \"1\"}]\n"),
			"spec.externalMetrics[0].value"},
		{"an External AverageValue of zero", doc("  externalMetrics: [{metricName: q, targetType: AverageValue, averageValue: \"0\"}]\n"),
			"spec.externalMetrics[0].averageValue"},
		{"an External fallback after less than 180 s (KEP-5679's minimum)", doc("  externalMetrics: [{metricName: q, targetType: Value, value: \"1\", fallback: {replicas: 3, failureDurationSeconds: 179}}]\n"),
			"spec.externalMetrics[0].fallback.failureDurationSeconds"},
		{"an External fallback of 0 replicas", doc("  externalMetrics: [{metricName: q, targetType: Value, value: \"1\", fallback: {replicas: 0}}]\n"),
			"spec.externalMetrics[0].fallback.replicas"},
		{"an External fallback without replicas", doc("  externalMetrics: [{metricName: q, targetType: Value, value: \"1\", fallback: {failureDurationSeconds: 300}}]\n"),
			"spec.externalMetrics[0].fallback.replicas"},
		{"a syncPeriodSeconds of 0 (KEP-6003's floor is 1)", string(framework.PodAutoscalerYAML("bad", "deployment", "x", 1, 2, "  externalMetrics: [{metricName: q, targetType: Value, value: \"1\"}]\n  behavior: {syncPeriodSeconds: 0}\n")),
			"spec.behavior.syncPeriodSeconds"},
		{"a syncPeriodSeconds above 3600 (KEP-6003)", string(framework.PodAutoscalerYAML("bad", "deployment", "x", 1, 2, "  externalMetrics: [{metricName: q, targetType: Value, value: \"1\"}]\n  behavior: {syncPeriodSeconds: 3601}\n")),
			"spec.behavior.syncPeriodSeconds"},
		{"an Object metric without a described object's name", doc("  objectMetrics: [{describedObject: {kind: Service}, metricName: q, targetType: Value, value: \"1\"}]\n"),
			"spec.objectMetrics[0].describedObject.name"},
		{"an Object metric with an empty described kind", doc("  objectMetrics: [{describedObject: {kind: \"\", name: web}, metricName: q, targetType: Value, value: \"1\"}]\n"),
			"spec.objectMetrics[0].describedObject.kind"},
		{"an Object Value of zero", doc("  objectMetrics: [{describedObject: {kind: Service, name: web}, metricName: q, targetType: Value, value: \"0\"}]\n"),
			"spec.objectMetrics[0].value"},
		{"an Object AverageValue target with a value", doc("  objectMetrics: [{describedObject: {kind: Service, name: web}, metricName: q, targetType: AverageValue, averageValue: \"1\", value: \"1\"}]\n"),
			"spec.objectMetrics[0].value"},
		{"a ContainerResource metric with an empty container name", doc("  containerResourceMetrics: [{resourceName: cpu, container: \"\", targetType: Utilization, averageUtilization: 50}]\n"),
			"spec.containerResourceMetrics[0].container"},
		{"a ContainerResource metric with a Value target", doc("  containerResourceMetrics: [{resourceName: cpu, container: app, targetType: Value, averageValue: \"1\"}]\n"),
			"spec.containerResourceMetrics[0].targetType"},
		{"a ContainerResource Utilization target without averageUtilization", doc("  containerResourceMetrics: [{resourceName: memory, container: app, targetType: Utilization}]\n"),
			"spec.containerResourceMetrics[0].averageUtilization"},
	})
	t.Run("one metric of each new kind alone is a valid spec", func(t *testing.T) {
		for i, metrics := range []string{
			"  externalMetrics: [{metricName: q, targetType: Value, value: \"1\"}]\n",
			"  objectMetrics: [{describedObject: {apiVersion: v1, kind: Service, name: web}, metricName: q, targetType: AverageValue, averageValue: 500m}]\n",
			"  containerResourceMetrics: [{resourceName: memory, container: app, targetType: AverageValue, averageValue: 64Mi}]\n",
		} {
			d := strings.Replace(doc(metrics), "name: bad", fmt.Sprintf("name: good-%d", i), 1)
			if _, err := cluster.ApplyErr(ctx, ns, []byte(d), true); err != nil {
				t.Errorf("rejected: %v\n%s", err, d)
			}
		}
	})
}
