package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// The fleet e2e of issue 32 §3: 50 stock HPAs of every metric kind podpilot serves on the kwok
// cluster (Pods, Object Value and AverageValue, External Value and AverageValue, Resource cpu
// Utilization and AverageValue, ContainerResource cpu), some with behavior policies and
// tolerances, moved over with `bin/podpilot migrate` as a user would while their load steps:
// the PodAutoscalers are written (dryRun) and applied, then handed over with --apply, once
// interrupted after an HPA's deletion and rerun. Memory is left out: its usage is a gauge like
// cpu's through the same resourceRules, so it adds no path the hand-over takes.
//
// A watch started before the migration records every change of the Deployments' spec.replicas
// (with the field manager that owns spec.replicas after it), every HPA status and deletion, and
// every PodAutoscaler status and spec change; migrate_fleet_check_test.go asserts on that record.

const (
	fleetNamespaces   = 5
	fleetPerNamespace = 10
	// fleetInterruptAfter is how many HPA deletions the first --apply makes before it is killed.
	fleetInterruptAfter = 4
	// The metrics' names, the Service the Object metrics describe, the replica bounds, and how long
	// the record goes on after the last hand-over (past the 30 s downscale window).
	fleetPodsMetric    = "mig_inflight_requests"
	fleetQueueMetric   = "mig_queue_messages"
	fleetService       = "web"
	fleetCPUCounter    = "container_cpu_usage_seconds_total"
	fleetInitial       = 2
	fleetMinReplicas   = 1
	fleetMaxReplicas   = 6
	fleetAfterHandOver = 45 * time.Second
)

// fleetTarget is one Deployment of the fleet, its HPA and its load: base before and after the
// migration, step while --apply runs.
type fleetTarget struct {
	ns, name   string
	kind       string
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	base, step float64
	// series exports the level: spread over the pods (perPod: the Pods metric, cpu) or as one series.
	perPod bool
	series func(level float64, pods []string, exp *exporter.Server)
}

func (ft *fleetTarget) key() string { return ft.ns + "/" + ft.name }

// fleetBehavior is a behavior with policies in both directions and a tolerance in each.
func fleetBehavior(upPods, downPercent, window int32, upTolerance, downTolerance string) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	up := scalingRules(0, autoscalingv2.PodsScalingPolicy, upPods, 15)
	down := scalingRules(window, autoscalingv2.PercentScalingPolicy, downPercent, 15)
	if upTolerance != "" {
		up.Tolerance = ptr.To(resource.MustParse(upTolerance))
	}
	if downTolerance != "" {
		down.Tolerance = ptr.To(resource.MustParse(downTolerance))
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: up, ScaleDown: down}
}

// fleetTargets is the fleet: in each namespace ten targets t0..t9, one per row below. Loads are
// chosen away from the rounding and tolerance boundaries: base holds 2 replicas, step moves them.
func fleetTargets(namespaces []string) []*fleetTarget {
	var out []*fleetTarget
	for _, ns := range namespaces {
		for i := range fleetPerNamespace {
			ft := fleetTarget{ns: ns, name: fmt.Sprintf("t%d", i)}
			var m autoscalingv2.MetricSpec
			var b *autoscalingv2.HorizontalPodAutoscalerBehavior
			switch i {
			case 0: // Pods 100 per pod, no behavior: 200 → 2, 400 → 4
				ft.kind, m, ft.base, ft.step = "Pods", framework.PodsMetric(fleetPodsMetric, 100), 200, 400
			case 1: // Pods under a scale-up policy of 1 pod per 15 s: 2 → 5 one pod at a time
				ft.kind, m, ft.base, ft.step = "Pods", framework.PodsMetric(fleetPodsMetric, 100), 200, 500
				b = fleetBehavior(1, 50, 15, "", "")
			case 2: // Object Value 30: 60 doubles the ready pods each round to the max
				ft.kind, m, ft.base, ft.step = "Object", framework.ServiceMetric("mig_object_2", fleetService, autoscalingv2.ValueMetricType, 30), 30, 60
			case 3: // Object AverageValue 10, with tolerances 5% up, 20% down
				ft.kind, m, ft.base, ft.step = "Object", framework.ServiceMetric("mig_object_3", fleetService, autoscalingv2.AverageValueMetricType, 10), 20, 45
				b = fleetBehavior(4, 100, 10, "50m", "200m")
			case 4: // External AverageValue 10: 20 → 2, 35 → 4
				ft.kind, m, ft.base, ft.step = "External", framework.ExternalMetric(fleetQueueMetric, map[string]string{"target": "t4"}, 10), 20, 35
				b = fleetBehavior(2, 50, 10, "", "")
			case 5: // External Value 30: 45 is ratio 1.5 on the ready pods each round
				ft.kind, m, ft.base, ft.step = "External", fleetExternalValue("t5", 30), 30, 45
			case 6: // cpu Utilization 50% of 100m: 100m over 2 pods
				ft.kind, m, ft.base, ft.step = "Resource", framework.CPUUtilization(50), 0.1, 0.1
			case 7: // cpu AverageValue 50m, tolerance 20% both ways
				ft.kind, m, ft.base, ft.step = "Resource", fleetCPUAverageValue("50m"), 0.1, 0.1
				b = fleetBehavior(2, 50, 20, "200m", "200m")
			case 8: // ContainerResource cpu of container app, Utilization 50%
				ft.kind, m, ft.base, ft.step = "ContainerResource", framework.ContainerCPUUtilization("app", 50), 0.1, 0.1
			case 9: // Pods with tolerance 20%: 230 (ratio 1.15) holds 2 replicas
				ft.kind, m, ft.base, ft.step = "Pods", framework.PodsMetric(fleetPodsMetric, 100), 200, 230
				b = fleetBehavior(2, 50, 15, "200m", "200m")
			}
			ft.hpa = framework.HPA(ft.name, fleetMinReplicas, fleetMaxReplicas, b, m)
			ft.perPod, ft.series = fleetSeries(ns, ft.name, ft.kind, m)
			out = append(out, &ft)
		}
	}
	return out
}

func fleetExternalValue(target string, value int64) autoscalingv2.MetricSpec {
	m := framework.ExternalValueMetric(fleetQueueMetric, value)
	m.External.Metric.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"target": target}}
	return m
}

func fleetCPUAverageValue(q string) autoscalingv2.MetricSpec {
	m := framework.CPUUtilization(0)
	m.Resource.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse(q))}
	return m
}

// fleetSeries returns how a target's level is exported: spread over its pods (a gauge of the
// Pods metric, or the cAdvisor cpu counter of container app), or one series of the namespace.
func fleetSeries(ns, name, kind string, m autoscalingv2.MetricSpec) (bool, func(float64, []string, *exporter.Server)) {
	switch kind {
	case "Pods":
		return true, func(level float64, pods []string, exp *exporter.Server) {
			for _, p := range pods {
				exp.SetGauge(fleetPodsMetric, map[string]string{"namespace": ns, "pod": p}, framework.PerPod(level, len(pods)))
			}
		}
	case "Resource", "ContainerResource":
		return true, func(level float64, pods []string, exp *exporter.Server) {
			for _, p := range pods {
				exp.SetRate(fleetCPUCounter, map[string]string{"namespace": ns, "pod": p, "container": "app"}, framework.PerPod(level, len(pods)))
			}
		}
	case "Object":
		return false, func(level float64, _ []string, exp *exporter.Server) {
			exp.SetGauge(m.Object.Metric.Name, map[string]string{"namespace": ns, "service": fleetService}, level)
		}
	default:
		return false, func(level float64, _ []string, exp *exporter.Server) {
			exp.SetGauge(fleetQueueMetric, map[string]string{"namespace": ns, "target": name}, level)
		}
	}
}

// fleetLoad sets every target's series once a second from one list of each namespace's pods,
// following the Deployments as they scale (a pod's series go when it stops running).
type fleetLoad struct {
	mu      sync.Mutex
	levels  map[string]float64
	targets []*fleetTarget
	exp     *exporter.Server
	last    map[string][]string
}

func startFleetLoad(ctx context.Context, t *testing.T, exp *exporter.Server, targets []*fleetTarget) *fleetLoad {
	l := &fleetLoad{levels: map[string]float64{}, targets: targets, exp: exp, last: map[string][]string{}}
	for _, ft := range targets {
		l.levels[ft.key()] = ft.base
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			l.tick(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

// set changes the level of the targets for which pick is true to level(target).
func (l *fleetLoad) set(pick func(*fleetTarget) bool, level func(*fleetTarget) float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ft := range l.targets {
		if pick(ft) {
			l.levels[ft.key()] = level(ft)
		}
	}
}

func (l *fleetLoad) tick(ctx context.Context) {
	running := map[string]map[string][]string{} // namespace → app → running pods
	for _, ft := range l.targets {
		if running[ft.ns] != nil {
			continue
		}
		pods, err := cluster.Client.CoreV1().Pods(ft.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		byApp := map[string][]string{}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && fleetPodReady(p) {
				byApp[p.Labels["app"]] = append(byApp[p.Labels["app"]], p.Name)
			}
		}
		running[ft.ns] = byApp
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ft := range l.targets {
		pods := running[ft.ns][ft.name]
		ft.series(l.levels[ft.key()], pods, l.exp)
		if !ft.perPod {
			continue
		}
		now := map[string]bool{}
		for _, p := range pods {
			now[p] = true
		}
		for _, p := range l.last[ft.key()] {
			if !now[p] {
				metric, labels := fleetPodsMetric, map[string]string{"namespace": ft.ns, "pod": p}
				if ft.kind == "Resource" || ft.kind == "ContainerResource" {
					metric, labels["container"] = fleetCPUCounter, "app"
				}
				l.exp.Delete(metric, labels)
			}
		}
		l.last[ft.key()] = pods
	}
}

func fleetPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestMigrateFleet migrates the fleet under load and checks the record (see checkFleetRecord).
func TestMigrateFleet(t *testing.T) {
	ctx := t.Context()
	kcm, err := cluster.HPAController()
	if err != nil {
		t.Fatal(err)
	}
	// podpilot's autoscaler with kube-controller-manager's HPA settings, as migrate's stderr says
	// to set them.
	takeOver(ctx, t, 1, append(kcm.PodpilotArgs(), "--config="+everyKindRulesFile(t))...)

	var namespaces []string
	for range fleetNamespaces {
		namespaces = append(namespaces, cluster.CreateNamespace(ctx, t, "mfleet"))
	}
	targets := fleetTargets(namespaces)
	createFleet(ctx, t, namespaces, targets)
	load := startFleetLoad(ctx, t, serveExporter(t), targets)
	for _, ft := range targets {
		if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ft.ns).Create(ctx, ft.hpa, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create HPA %s: %v", ft.key(), err)
		}
	}
	rec := startFleetRecorder(ctx, t, namespaces)

	// 1. The PodAutoscalers, written by migrate and applied as its output (kubectl apply -f).
	migrateArgs := []string{"--from-cluster", "--kubeconfig=" + cluster.Kubeconfig,
		"--hpa-sync-period=" + kcm.SyncPeriod.String(), "--hpa-downscale-stabilization=" + kcm.DownscaleStabilization.String(),
		fmt.Sprintf("--hpa-tolerance=%g", kcm.Tolerance), "--hpa-cpu-initialization-period=" + kcm.CPUInitializationPeriod.String(),
		"--hpa-initial-readiness-delay=" + kcm.InitialReadinessDelay.String()}
	for _, ns := range namespaces {
		out, _ := runMigrate(ctx, t, append(migrateArgs, "-n", ns), 0)
		if n := strings.Count(out, "kind: PodAutoscaler"); n != fleetPerNamespace {
			t.Fatalf("migrate -n %s wrote %d PodAutoscalers, want %d:\n%s", ns, n, fleetPerNamespace, out)
		}
		cluster.Apply(ctx, t, ns, []byte(out))
	}
	// Their dry-run decisions equal their HPAs' at rest before the load moves.
	waitFleetDryRunMatches(ctx, t, targets)

	// 2. Under load: the step of the moving targets starts with the hand-over.
	moving := func(ft *fleetTarget) bool { return ft.step != ft.base }
	load.set(moving, func(ft *fleetTarget) float64 { return ft.step })
	t.Logf("load stepped on %d targets", countTargets(targets, moving))

	// 3. --apply, the first namespace's run killed after its 4th HPA deletion, then rerun; the
	// moving targets of the first two namespaces step back meanwhile.
	apply := append(migrateArgs, "--apply")
	killedOut, killedAt := runMigrate(ctx, t, append(apply, "-n", namespaces[0]), fleetInterruptAfter)
	load.set(func(ft *fleetTarget) bool { return moving(ft) && (ft.ns == namespaces[0] || ft.ns == namespaces[1]) },
		func(ft *fleetTarget) float64 { return ft.base })
	var rerunOut string
	for i, ns := range namespaces {
		out, _ := runMigrate(ctx, t, append(apply, "-n", ns), 0)
		if i == 0 {
			rerunOut = out
		}
	}
	// 4. The PodAutoscalers scale on: the rest step back; the record goes on past the downscale window.
	load.set(moving, func(ft *fleetTarget) float64 { return ft.base })
	time.Sleep(fleetAfterHandOver)
	r := rec.stop()
	r.killedAt = killedAt
	r.killedActivated = strings.Count(killedOut, ": PodAutoscaler active\n")
	r.rerunActivated = strings.Count(rerunOut, ": PodAutoscaler active\n")
	r.rerunFinished = strings.Count(rerunOut, ": interrupted hand-over finished")
	checkFleetRecord(t, targets, r, kcm.SyncPeriod, kcm.DownscaleStabilization)
}

// createFleet creates the Service of the Object metrics in each namespace and the Deployments,
// and waits until their pods run.
func createFleet(ctx context.Context, t *testing.T, namespaces []string, targets []*fleetTarget) {
	t.Helper()
	for _, ns := range namespaces {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fleetService},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": fleetService}, Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service: %v", err)
		}
	}
	for _, ft := range targets {
		if _, err := cluster.Client.AppsV1().Deployments(ft.ns).Create(ctx, cluster.Deployment(ft.name, fleetInitial), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create deployment %s: %v", ft.key(), err)
		}
	}
	framework.WaitFor(ctx, t, 3*time.Minute, "the fleet's pods running", func(ctx context.Context) (bool, string, error) {
		for _, ft := range targets {
			pods, err := cluster.RunningPods(ctx, ft.ns, ft.name)
			if err != nil || len(pods) != fleetInitial {
				return false, fmt.Sprintf("%s: %d running", ft.key(), len(pods)), err
			}
		}
		return true, "", nil
	})
}

// waitFleetDryRunMatches waits until every dry-run PodAutoscaler decided for its current spec
// with its metrics read, and its desired replicas equal its HPA's and the Deployment's.
func waitFleetDryRunMatches(ctx context.Context, t *testing.T, targets []*fleetTarget) {
	t.Helper()
	pc := podpilotClient(t)
	framework.WaitFor(ctx, t, 4*time.Minute, "every dry-run PodAutoscaler deciding as its HPA", func(ctx context.Context) (bool, string, error) {
		for _, ft := range targets {
			h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ft.ns).Get(ctx, ft.name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			pa, err := pc.AutoscalingV1alpha1().PodAutoscalers(ft.ns).Get(ctx, ft.name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			replicas, err := cluster.Replicas(ctx, "Deployment", ft.ns, ft.name)
			if err != nil {
				return false, "", err
			}
			decided := pa.Status.Mode == podpilotv1alpha1.DryRunMode && pa.Status.ObservedGeneration == pa.Generation &&
				pa.Status.LastDecision != nil && meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
			if !decided || hpaCondition(h, autoscalingv2.ScalingActive) != corev1.ConditionTrue ||
				pa.Status.DesiredReplicas != h.Status.DesiredReplicas || h.Status.DesiredReplicas != replicas || replicas != fleetInitial {
				return false, fmt.Sprintf("%s: deployment %d, HPA %d (%s), PodAutoscaler %s", ft.key(), replicas, h.Status.DesiredReplicas,
					hpaConditions(h), describeConditions(pa)), nil
			}
		}
		return true, "", nil
	})
}

func countTargets(targets []*fleetTarget, pick func(*fleetTarget) bool) int {
	n := 0
	for _, ft := range targets {
		if pick(ft) {
			n++
		}
	}
	return n
}
