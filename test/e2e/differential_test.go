package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// The differential test of issue 9: the same exporter schedule drives a
// stock autoscaling/v2 HPA (kube-controller-manager, reading podpilot's
// aggregated metrics APIs) on one Deployment and the equivalent
// PodAutoscaler (framework.PodAutoscalerFor: same metrics, behavior and
// bounds; podpilot's autoscaler flags set to kube-controller-manager's HPA
// flags) on an identical Deployment. At the end of every hold of the
// schedule (a checkpoint) both replica counts must be equal: the stock HPA
// is the oracle. Each checkpoint also has the count the schedule was
// designed to reach, so a schedule whose timing no longer tests what its
// step says fails too.

// differentialStep is one level of a schedule, held for hold; the
// checkpoint at its end expects want replicas.
type differentialStep struct {
	level  float64
	hold   time.Duration
	want   int32
	checks string
}

// differentialCase is one autoscaler configuration and its schedule.
type differentialCase struct {
	name string
	// hpa builds the stock HPA scaling Deployment name.
	hpa func(name string) *autoscalingv2.HorizontalPodAutoscaler
	// initial is the replicas both Deployments start with.
	initial int32
	// level names the schedule's quantity in the table.
	level string
	// drive starts exporting the metric for the workloads apps in ns and
	// returns what sets its level; warm, if set, waits until the metrics
	// API reads the first level.
	drive func(ctx context.Context, t *testing.T, ns string, exp *exporter.Server, apps []string) func(level float64)
	warm  func(ctx context.Context, t *testing.T, ns string, apps []string, level float64)
	steps []differentialStep
	// deployment builds each workload (nil: cluster.Deployment); setup,
	// if set, creates what the metrics describe in ns first.
	deployment func(name string, replicas int32) *appsv1.Deployment
	setup      func(ctx context.Context, t *testing.T, ns string)
	// actions, by step index, is what a person does to both autoscalers
	// or both workloads at the start of that step, before its level is set.
	actions map[int]func(ctx context.Context, t *testing.T, ns string)
}

// differentialCheckpoint is one row of the table: both counts at the end of a hold,
// and both autoscalers' statuses then (see autoscalerState).
type differentialCheckpoint struct {
	at       time.Duration
	step     differentialStep
	hpa, ppa int32
	states   [2]autoscalerState
}

const (
	diffHPAApp = "web-hpa"
	diffPPAApp = "web-ppa"
)

// everyKindRulesFile writes the rules a podpilot serving every metric kind to
// HPAs and PodAutoscalers reads: the default rules with the per-Service rule
// (Object metrics), and resourceRules over a 15 s rate window (the window
// kubelet's resource metrics have for metrics-server), so cpu settles soon
// after the pods start.
func everyKindRulesFile(t *testing.T) string {
	t.Helper()
	resourceRules := strings.NewReplacer("[1m]", "[15s]", "window: 1m", "window: 15s").Replace(framework.ResourceRulesYAML())
	withServices := strings.Replace(rules.DefaultYAML, "\nrules:\n", "\nrules:\n"+framework.ServiceRulesYAML, 1)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(withServices+resourceRules), 0o644); err != nil {
		t.Fatal(err)
	}
	return rulesFile
}

// TestDifferentialStockHPAAgainstPodAutoscaler runs every case at once with
// a podpilot of its own, whose autoscaler has kube-controller-manager's HPA
// settings (takeOver: no other test runs meanwhile, since the shared
// podpilot's short periods are what the other tests' PodAutoscalers expect).
func TestDifferentialStockHPAAgainstPodAutoscaler(t *testing.T) {
	ctx := t.Context()
	kcm, err := cluster.HPAController()
	if err != nil {
		t.Fatal(err)
	}
	args := append(kcm.PodpilotArgs(), "--config="+everyKindRulesFile(t))
	t.Logf("kube-controller-manager's HPA settings: %+v; podpilot's autoscaler runs with %s", kcm, strings.Join(args, " "))
	takeOver(ctx, t, 1, args...)
	// The cases run at once, each in its own namespace. Their subtests are
	// started from goroutines rather than marked t.Parallel: go test runs
	// at most -parallel (GOMAXPROCS, 2 on the CI machine) parallel subtests
	// at a time, and the cases mostly wait on holds.
	var wg sync.WaitGroup
	for _, dc := range differentialCases() {
		wg.Go(func() {
			t.Run(dc.name, func(t *testing.T) { runDifferential(t, dc) })
		})
	}
	wg.Wait()
}

func differentialCases() []differentialCase {
	return append([]differentialCase{podsMetricWithPoliciesCase(), scaleEventsOfBothDirectionsCase(), cpuUtilizationCase(), externalMetricCase(),
		externalValueCase(), objectValueCase(), objectAverageValueCase(), containerResourceCase(), twoPoliciesEachWayCase()}, v137Cases()...)
}

// podsMetricWithPoliciesCase: a Pods metric (a gauge spread over the pods,
// 100 per pod targeted) under a scale-up policy of 2 pods per 60 s and a
// scale-down stabilization of 30 s with a policy of 50% per 180 s. The
// scale-down's period start is current − scale-ups + scale-downs inside the
// period (upstream's getReplicasChangePerPeriod over both directions), where
// upstream's storeScaleEvent has overwritten the first scale-up, outdated
// for the 60 s scale-up policy, with the second: 6 − 2 = 4, not 6 − 4 = 2.
func podsMetricWithPoliciesCase() differentialCase {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   scalingRules(0, autoscalingv2.PodsScalingPolicy, 2, 60),
		ScaleDown: scalingRules(30, autoscalingv2.PercentScalingPolicy, 50, 180),
	}
	return podsMetricCase("pods metric with behavior policies", behavior, []differentialStep{
		{200, 15 * time.Second, 2, "100 per pod: at the target"},
		{600, 35 * time.Second, 4, "wants 6; Pods 2 per 60s allows 2→4"},
		{600, 60 * time.Second, 6, "the next 60s period allows 4→6"},
		{80, 15 * time.Second, 6, "wants 1; held by the 30s scale-down stabilization"},
		{80, 50 * time.Second, 2, "Percent 50 per 180s from 6-2=4 (the 2nd scale-up overwrote the outdated 1st): 2"},
	})
}

// scaleEventsOfBothDirectionsCase: scale-ups of 1 and 2 pods 20 s apart
// under a scale-up policy of 4 pods per 40 s, then a third scale-up 60 s
// later, when both are outdated for it: upstream's storeScaleEvent overwrites only the
// last outdated event with the new one and keeps the first, so a scale-down
// policy of 3 pods per 180 s starts its period at 7 − (1 + 2) = 4 and
// allows 1; without the first scale-up it would start at 5 and stop at 2.
func scaleEventsOfBothDirectionsCase() differentialCase {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   scalingRules(0, autoscalingv2.PodsScalingPolicy, 4, 40),
		ScaleDown: scalingRules(30, autoscalingv2.PodsScalingPolicy, 3, 180),
	}
	return podsMetricCase("scale-down policy counting earlier scale-ups", behavior, []differentialStep{
		{200, 15 * time.Second, 2, "100 per pod: at the target"},
		{300, 20 * time.Second, 3, "scale-up +1"},
		{480, 60 * time.Second, 5, "scale-up +2, inside the 1st's 40s period"},
		{680, 25 * time.Second, 7, "scale-up +2; the earlier two outdated for the 40s policy, only the last overwritten"},
		{70, 15 * time.Second, 7, "wants 1; held by the 30s scale-down stabilization"},
		{70, 50 * time.Second, 1, "Pods 3 per 180s from 7-(1+2)=4: 1 (2 if the kept first scale-up were dropped)"},
	})
}

// diffMetric is the per-pod gauge of the Pods metric cases.
const diffMetric = "diff_inflight_requests"

// podsMetricCase is a case of 2 pods scaled between 1 and 10 on diffMetric, 100 per pod
// targeted, under behavior.
func podsMetricCase(name string, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, steps []differentialStep) differentialCase {
	return differentialCase{
		name: name,
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, 1, 10, behavior, framework.PodsMetric(diffMetric, 100))
		},
		initial: 2,
		level:   diffMetric + " (sum)",
		drive: driveLoads(func(ctx context.Context, exp *exporter.Server, ns, app string) *framework.Load {
			return cluster.NewLoad(ctx, exp, ns, app, diffMetric, false)
		}),
		steps: steps,
	}
}

// scalingRules is one direction's rules with one policy and the Max select policy.
func scalingRules(window int32, typ autoscalingv2.HPAScalingPolicyType, value, period int32) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To(window),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: typ, Value: value, PeriodSeconds: period}},
	}
}

// driveLoads starts one load per workload with newLoad and sets every one to the level.
func driveLoads(newLoad func(ctx context.Context, exp *exporter.Server, ns, app string) *framework.Load) func(ctx context.Context, t *testing.T, ns string, exp *exporter.Server, apps []string) func(float64) {
	return func(ctx context.Context, t *testing.T, ns string, exp *exporter.Server, apps []string) func(float64) {
		var loads []*framework.Load
		for _, app := range apps {
			l := newLoad(ctx, exp, ns, app)
			t.Cleanup(l.Stop)
			loads = append(loads, l)
		}
		return func(level float64) {
			for _, l := range loads {
				l.Set(level)
			}
		}
	}
}

// cpuUtilizationCase: cpu Utilization (50% of a 100m request) from the
// resourceRules path, cpu cores spread over the pods, without a behavior:
// the classic normalization (scale-up limit max(2×current, 4), the
// controller's downscale stabilization), with new pods' cpu ignored until a
// full window after they became ready.
func cpuUtilizationCase() differentialCase {
	return differentialCase{
		name: "cpu utilization",
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, 1, 10, nil, framework.CPUUtilization(50))
		},
		initial: 2,
		level:   "cpu cores (sum)",
		drive:   driveLoads(cluster.NewCPULoad),
		warm:    waitPodCPU,
		steps: []differentialStep{
			{0.1, 15 * time.Second, 2, "50m of 100m per pod: at the target"},
			{0.3, 100 * time.Second, 6, "up to 300m/6 pods = 50%"},
			{0.1, 15 * time.Second, 6, "wants 2; held by the 30s downscale stabilization"},
			{0.1, 85 * time.Second, 2, "down to 100m/2 pods = 50%"},
		},
	}
}

// externalMetricCase: an External metric (a queue length, a gauge without
// pod label, AverageValue 10 per replica), narrowed by a selector beside a
// second queue that would ask for maxReplicas, under a scale-up policy of
// 100% per 30 s; the behavior leaves scale-down unset, so both take
// autoscaling/v2's default policy and the controller's downscale
// stabilization window.
func externalMetricCase() differentialCase {
	const metric = "diff_queue_messages"
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: scalingRules(0, autoscalingv2.PercentScalingPolicy, 100, 30),
	}
	return differentialCase{
		name: "external metric",
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, 1, 10, behavior, framework.ExternalMetric(metric, map[string]string{"queue": "q1"}, 10))
		},
		initial: 2,
		level:   metric + `{queue="q1"}`,
		drive: func(_ context.Context, _ *testing.T, ns string, exp *exporter.Server, _ []string) func(float64) {
			exp.SetGauge(metric, map[string]string{"namespace": ns, "queue": "q2"}, 1000)
			return func(level float64) {
				exp.SetGauge(metric, map[string]string{"namespace": ns, "queue": "q1"}, level)
			}
		},
		steps: []differentialStep{
			{20, 15 * time.Second, 2, "10 per replica: at the target"},
			{75, 22 * time.Second, 4, "wants 8; Percent 100 per 30s allows 2→4"},
			{75, 38 * time.Second, 8, "the next 30s period allows 4→8"},
			{25, 15 * time.Second, 8, "wants 3; held by the 30s downscale stabilization (the flag's)"},
			{25, 50 * time.Second, 3, "ceil(25/10), the default Percent 100 per 15s not limiting"},
		},
	}
}

// waitPodCPU waits until metrics.k8s.io reads every pod of apps at its
// share of cores, so the autoscalers start from a settled rate.
func waitPodCPU(ctx context.Context, t *testing.T, ns string, apps []string, cores float64) {
	t.Helper()
	mc, err := metricsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apps {
		sel := labels.SelectorFromSet(labels.Set{"app": app}).String()
		framework.WaitFor(ctx, t, 2*time.Minute, "settled cpu of "+app, func(ctx context.Context) (bool, string, error) {
			pods, err := cluster.RunningPods(ctx, ns, app)
			if err != nil {
				return false, "", err
			}
			l, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return false, "", err
			}
			want := framework.PerPod(cores, len(pods)) * 1000
			ok := len(l.Items) == len(pods)
			var state strings.Builder
			for _, pm := range l.Items {
				var milli int64
				for _, c := range pm.Containers {
					milli += c.Usage.Cpu().MilliValue()
				}
				fmt.Fprintf(&state, "%s=%dm; ", pm.Name, milli)
				ok = ok && math.Abs(float64(milli)-want) <= 0.02*want
			}
			return ok, state.String(), nil
		})
	}
}

func runDifferential(t *testing.T, dc differentialCase) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "diff")
	if dc.setup != nil {
		dc.setup(ctx, t, ns)
	}
	deployment := dc.deployment
	if deployment == nil {
		deployment = cluster.Deployment
	}
	apps := []string{diffHPAApp, diffPPAApp}
	for _, app := range apps {
		if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, deployment(app, dc.initial), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create deployment %s: %v", app, err)
		}
	}
	for _, app := range apps {
		framework.WaitFor(ctx, t, time.Minute, app+" running", func(ctx context.Context) (bool, string, error) {
			pods, err := cluster.RunningPods(ctx, ns, app)
			return len(pods) == int(dc.initial), fmt.Sprintf("%d running", len(pods)), err
		})
	}
	set := dc.drive(ctx, t, ns, serveExporter(t), apps)
	set(dc.steps[0].level)
	if dc.warm != nil {
		dc.warm(ctx, t, ns, apps, dc.steps[0].level)
	}
	hpa := dc.hpa(diffHPAApp)
	pa, err := framework.PodAutoscalerFor(hpa, diffPPAApp, diffPPAApp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	if _, err := podpilotClient(t).AutoscalingV1alpha1().PodAutoscalers(ns).Create(ctx, pa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodAutoscaler: %v", err)
	}
	waitBothActive(ctx, t, ns, len(hpa.Spec.Metrics))

	rows := runSchedule(ctx, t, ns, dc, set)
	// On stdout, so go test ... | grep '^DIFF' collects every case's table.
	fmt.Print(differentialTable(dc, rows))
	for i, r := range rows {
		if r.hpa != r.ppa {
			t.Errorf("checkpoint %d (%s): the stock HPA has %d replicas, the PodAutoscaler %d", i, r.step.checks, r.hpa, r.ppa)
		}
		if r.states[0].conditions() != r.states[1].conditions() {
			t.Errorf("checkpoint %d (%s): the stock HPA's conditions are %s, the PodAutoscaler's %s", i, r.step.checks, r.states[0].conditions(), r.states[1].conditions())
		}
		for j, who := range [2]string{"stock HPA", "PodAutoscaler"} {
			if s := r.states[j]; s.observedGeneration != s.generation {
				t.Errorf("checkpoint %d (%s): the %s observed generation %d of %d", i, r.step.checks, who, s.observedGeneration, s.generation)
			}
		}
		if r.hpa != r.step.want {
			t.Errorf("checkpoint %d (%s): the stock HPA has %d replicas where the schedule expects %d: the step does not check what it says",
				i, r.step.checks, r.hpa, r.step.want)
		}
	}
	if t.Failed() {
		logBothStatuses(ctx, t, ns)
	}
}

// waitBothActive waits until the HPA reads all its metrics and the
// PodAutoscaler is ScalingActive.
func waitBothActive(ctx context.Context, t *testing.T, ns string, metrics int) {
	t.Helper()
	framework.WaitFor(ctx, t, 2*time.Minute, "the HPA to read its metrics", func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, diffHPAApp, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(h.Status.CurrentMetrics) == metrics && hpaCondition(h, autoscalingv2.ScalingActive) == corev1.ConditionTrue, hpaConditions(h), nil
	})
	framework.WaitFor(ctx, t, 2*time.Minute, "the PodAutoscaler to read its metrics", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, diffPPAApp)
		if err != nil {
			return false, "", err
		}
		return len(pa.Status.CurrentMetrics) == metrics && meta.IsStatusConditionTrue(pa.Status.Conditions, "ScalingActive"), describeConditions(pa), nil
	})
}

// runSchedule sets each step's level, watches both replica counts through
// its hold, logging every change with its time, and takes the checkpoint
// at its end.
func runSchedule(ctx context.Context, t *testing.T, ns string, dc differentialCase, set func(float64)) []differentialCheckpoint {
	t.Helper()
	start := time.Now()
	last := [2]int32{-1, -1}
	var rows []differentialCheckpoint
	for i, s := range dc.steps {
		if act := dc.actions[i]; act != nil {
			act(ctx, t, ns)
			t.Logf("+%5.1fs action of step %d (%s)", time.Since(start).Seconds(), i, s.checks)
		}
		if i == 0 || s.level != dc.steps[i-1].level {
			set(s.level)
			t.Logf("+%5.1fs level %g", time.Since(start).Seconds(), s.level)
		}
		end := time.Now().Add(s.hold)
		for {
			now, err := bothReplicas(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			for j, who := range [2]string{"HPA", "PodAutoscaler"} {
				if now[j] != last[j] {
					t.Logf("+%5.1fs %s %d → %d", time.Since(start).Seconds(), who, last[j], now[j])
				}
			}
			last = now
			if !time.Now().Before(end) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(min(time.Second, time.Until(end))):
			}
		}
		states, err := bothStates(ctx, t, ns)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, differentialCheckpoint{at: time.Since(start), step: s, hpa: last[0], ppa: last[1], states: states})
	}
	return rows
}

// bothReplicas reads spec.replicas of the HPA's and the PodAutoscaler's Deployments.
func bothReplicas(ctx context.Context, ns string) ([2]int32, error) {
	var out [2]int32
	for i, app := range [2]string{diffHPAApp, diffPPAApp} {
		r, err := cluster.Replicas(ctx, "Deployment", ns, app)
		if err != nil {
			return out, err
		}
		out[i] = r
	}
	return out, nil
}

// differentialTable renders the checkpoints side by side, each line
// prefixed with DIFF and the case.
func differentialTable(dc differentialCase, rows []differentialCheckpoint) string {
	var b strings.Builder
	p := "DIFF " + dc.name + " | "
	fmt.Fprintf(&b, "%s%7s | %-28s | %8s | %11s | %6s | %-34s | %s\n", p, "t", dc.level, "stockHPA", "PodAutoscaler", "design", "conditions (HPA; PodAutoscaler)", "checks")
	for _, r := range rows {
		mark := ""
		if r.hpa != r.ppa || r.states[0].conditions() != r.states[1].conditions() {
			mark = "  <- DIFFERENT"
		}
		conds := r.states[0].conditions()
		if conds != r.states[1].conditions() {
			conds += "; " + r.states[1].conditions()
		}
		fmt.Fprintf(&b, "%s%6.0fs | %-28g | %8d | %11d | %6d | %-34s | %s%s\n", p, r.at.Seconds(), r.step.level, r.hpa, r.ppa, r.step.want, conds, r.step.checks, mark)
	}
	return b.String()
}

// logBothStatuses logs the HPA's and the PodAutoscaler's status, for a failed case.
func logBothStatuses(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	if h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, diffHPAApp, metav1.GetOptions{}); err == nil {
		t.Logf("HPA status: %d→%d, %s", h.Status.CurrentReplicas, h.Status.DesiredReplicas, hpaConditions(h))
	}
	if pa, err := getPodAutoscaler(ctx, t, ns, diffPPAApp); err == nil {
		t.Logf("PodAutoscaler status: %s; scale events %+v", describeConditions(pa), pa.Status.ScaleEvents)
	}
}
