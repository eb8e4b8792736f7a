package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// victimValue is what every series of namespace B holds; ownValue is namespace A's own
// namespace-level series.
const (
	victimValue = 777
	ownValue    = 5
)

// clusterWideRule serves tenancy_level as the external metric cluster_tenancy_level from a rule
// marked namespaced: false: its queries are not limited to the reader's namespace.
const clusterWideRule = `- seriesQuery: '{__name__="tenancy_level",namespace!=""}'
  resources: {namespaced: false}
  name: {matches: ^tenancy_level$, as: cluster_tenancy_level}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
`

// tenancyAttempt is a PodAutoscaler in namespace A that tries to read namespace B.
type tenancyAttempt struct {
	name   string // the PodAutoscaler, and the Deployment in A it scales unless target is set
	target string // a Deployment that exists only in B
	spec   string // its metrics, with B for namespace B
}

func tenancyAttempts(b string) []tenancyAttempt {
	return []tenancyAttempt{
		{name: "pods", spec: `  customMetrics:
  - metricName: zdns_vanguard_qps
    averageValue: "1000000"
    selector: {matchLabels: {namespace: B}}
`},
		{name: "object", spec: `  objectMetrics:
  - describedObject: {apiVersion: v1, kind: Service, name: web}
    metricName: requests_in_flight
    selector: {matchLabels: {namespace: B}}
    targetType: Value
    value: "1000000"
`},
		{name: "namespace-object", spec: `  objectMetrics:
  - describedObject: {apiVersion: v1, kind: Namespace, name: B}
    metricName: tenancy_level
    targetType: Value
    value: "1000000"
`},
		{name: "external", spec: `  externalMetrics:
  - metricName: tenancy_level
    selector: {matchLabels: {namespace: B}}
    targetType: Value
    value: "1000000"
`},
		{name: "cluster-external", spec: `  externalMetrics:
  - metricName: cluster_tenancy_level
    selector: {matchLabels: {namespace: B}}
    targetType: Value
    value: "1000000"
`},
		{name: "resource", target: "victim", spec: `  resourceMetrics:
  - resourceName: cpu
    targetType: Utilization
    averageUtilization: 50
`},
		{name: "container-resource", target: "victim2", spec: `  containerResourceMetrics:
  - resourceName: cpu
    container: app
    targetType: Utilization
    averageUtilization: 50
`},
	}
}

// TestTenancyPodAutoscalerReadsOnlyItsNamespace (issue 21 §4): a PodAutoscaler in namespace A
// tries to read namespace B through every metric kind: a Pods and an Object metric with the
// selector namespace=B, a Namespace object named B, an External metric of a namespaced rule with
// namespace=B, and Resource and ContainerResource metrics of Deployments that exist only in B.
// None shows B's values (777): the request's namespace is always matched, a Namespace object is
// read as the PodAutoscaler's own (5), and scale targets resolve in A. The one hole is an
// External metric of a rule marked namespaced: false, which shows B's 777 by default and is
// refused with --autoscaler-restrict-cluster-external-metrics.
func TestTenancyPodAutoscalerReadsOnlyItsNamespace(t *testing.T) {
	ctx := t.Context()
	a := cluster.CreateNamespace(ctx, t, "tenancy-a")
	b := cluster.CreateNamespace(ctx, t, "tenancy-b")
	rulesPath := tenancyRules(t)
	exp := serveExporter(t)
	for _, name := range []string{"victim", "victim2"} {
		startWorkload(ctx, t, b, name, 1)
		usage := cluster.NewUsage(ctx, exp, b, name, float64(victimValue)/1000, 64*mi)
		t.Cleanup(usage.Stop)
	}
	load := cluster.NewLoad(ctx, exp, b, "victim", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(victimValue)
	for _, ns := range []string{a, b} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service: %v", err)
		}
	}
	exp.SetGauge("requests_in_flight", map[string]string{"namespace": b, "service": "web"}, victimValue)
	exp.SetGauge("tenancy_level", map[string]string{"namespace": b}, victimValue)
	exp.SetGauge("tenancy_level", map[string]string{"namespace": a}, ownValue)

	p := takeOver(ctx, t, 1, "--config="+rulesPath)[0]
	attempts := tenancyAttempts(b)
	for _, at := range attempts {
		target := at.target
		if target == "" {
			target = at.name
			startWorkload(ctx, t, a, target, 1)
		}
		spec := strings.ReplaceAll(at.spec, "namespace: B", "namespace: "+b)
		spec = strings.ReplaceAll(spec, "name: B", "name: "+b)
		applyPodAutoscaler(ctx, t, a, kindsPodAutoscalerYAML(at.name, "deployment", target, 1, 3, spec))
	}
	off := readAttempts(ctx, t, a, attempts, false)

	p.Stop()
	restricted := cluster.StartPodpilot(t, podpilotBinary, append(sharedArgs(), "--config="+rulesPath, "--autoscaler-restrict-cluster-external-metrics")...)
	if err := restricted.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cluster.RegisterMetricsAPIs(ctx, restricted.Port); err != nil {
		t.Fatal(err)
	}
	on := readAttempts(ctx, t, a, attempts, true)
	t.Logf("FIGURE tenancy: a PodAutoscaler in A reading B, flag off: %s; flag on: %s", off, on)
}

// tenancyRules writes the shared podpilot's rules plus clusterWideRule and returns the path.
func tenancyRules(t *testing.T) string {
	t.Helper()
	shared, err := os.ReadFile(filepath.Join(cluster.StateDir, "podpilot-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withRule := strings.Replace(string(shared), "\nexternalRules:\n", "\nexternalRules:\n"+clusterWideRule, 1)
	if withRule == string(shared) {
		t.Fatal("no externalRules list in the shared rules")
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(withRule), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAttempts waits until every attempt shows what it may read (namespace-object: A's own 5;
// cluster-external: B's 777 unless restricted, else the refusal; every other: no value and a
// False condition), then watches them for 3 sync periods in which nothing else may show. It
// returns what each showed. Until they settle, a status may still be the previous phase's.
func readAttempts(ctx context.Context, t *testing.T, ns string, attempts []tenancyAttempt, restricted bool) string {
	t.Helper()
	shown := map[string]string{}
	check := func(ctx context.Context) (bool, string, error) {
		var wrong []string
		for _, at := range attempts {
			pa, err := getPodAutoscaler(ctx, t, ns, at.name)
			if err != nil {
				return false, "", err
			}
			value, failure := attemptState(pa)
			shown[at.name] = value
			if failure != "" {
				shown[at.name], _, _ = strings.Cut(failure, ":") // the condition and reason
			}
			want := ""
			switch {
			case at.name == "namespace-object":
				want = fmt.Sprint(ownValue)
			case at.name == "cluster-external" && !restricted:
				want = fmt.Sprint(victimValue)
			}
			ok := value == want && (want != "" || failure != "")
			if at.name == "cluster-external" && restricted {
				ok = ok && strings.Contains(failure, "namespaced: false")
			}
			if !ok {
				wrong = append(wrong, fmt.Sprintf("%s shows %q, want %q", at.name, value+failure, want))
			}
		}
		return len(wrong) == 0, strings.Join(wrong, "; "), nil
	}
	framework.WaitFor(ctx, t, 2*time.Minute, "every attempt settled", check)
	tick := time.NewTicker(sharedSyncPeriod / 4)
	defer tick.Stop()
	for range 12 { // 3 sync periods
		<-tick.C
		if ok, wrong, err := check(ctx); err != nil || !ok {
			t.Fatalf("after settling: %s %v", wrong, err)
		}
	}
	var out []string
	for name, s := range shown {
		out = append(out, name+" → "+s)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// attemptState is the value a PodAutoscaler's first metric shows ("" for none) and, without
// one, the reason and message of its first False condition.
func attemptState(pa *podpilotv1alpha1.PodAutoscaler) (value, failure string) {
	if len(pa.Status.CurrentMetrics) > 0 {
		m := pa.Status.CurrentMetrics[0]
		switch {
		case m.Value != nil:
			value = m.Value.String()
		case m.AverageValue != nil:
			value = m.AverageValue.String()
		case m.AverageUtilization != nil:
			value = fmt.Sprint(*m.AverageUtilization) + "%"
		}
	}
	if value != "" {
		return value, ""
	}
	for _, typ := range []string{"AbleToScale", "ScalingActive"} {
		if c := meta.FindStatusCondition(pa.Status.Conditions, typ); c != nil && c.Status == metav1.ConditionFalse {
			return "", fmt.Sprintf("%s=False %s: %s", typ, c.Reason, c.Message)
		}
	}
	return "", ""
}
