package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// stepKind is one kind of load step: the metric both autoscalers scale on,
// and where each one's metric source is read to time the metric lag.
type stepKind struct {
	// name prefixes the Deployments (<name>-pa, <name>-hpa).
	name, title, intro string
	// paSpec is the PodAutoscaler's spec lines below maxReplicas.
	paSpec string
	hpa    autoscalingv2.MetricSpec
	// threshold is the metric value above which a scale-up is due:
	// the target plus the tolerance (0.1).
	threshold float64
	// read returns the metric of Deployment name as its autoscaler's
	// source serves it (hpa: the stock HPA's source).
	read func(ctx context.Context, name string, hpa bool) (float64, error)
}

// stepRun is the Deployments and load of one stepKind.
type stepRun struct {
	kind  stepKind
	rates map[string]*rateLoad
	pp    versioned.Interface
}

const (
	maxReplicas = 6
	// stepTimeout bounds one step's wait for a stable scale-up.
	stepTimeout = 5 * time.Minute
)

// loadSteps runs e.o.steps load steps of kind on two identical Deployments,
// one under a PodAutoscaler, one under the stock HPA, and returns the
// section with the at-defaults (or tuned) table.
func (e *env) loadSteps(ctx context.Context, kind stepKind) (report.Section, error) {
	sec := report.Section{Title: kind.title, Intro: kind.intro}
	pp, err := versioned.NewForConfig(e.c.Config)
	if err != nil {
		return sec, fmt.Errorf("podpilot clientset: %w", err)
	}
	run := &stepRun{kind: kind, rates: map[string]*rateLoad{}, pp: pp}
	defer func() {
		for _, r := range run.rates {
			r.stop()
		}
		e.deleteDeployments(context.WithoutCancel(ctx), kind)
	}()
	for _, name := range []string{kind.name + "-pa", kind.name + "-hpa"} {
		u, err := e.workload(ctx, name)
		if err != nil {
			return sec, err
		}
		run.rates[name] = startRate(ctx, u, lowRate)
	}
	if err := e.waitMetric(ctx, kind); err != nil {
		return sec, err
	}
	var pa, hpa []reaction
	detail := report.Table{Header: []string{"step", "phase offset", "autoscaler", "pods", "metric lag", "decision", "pod start-up", "step → last new pod Ready in endpoints"}}
	for i := range e.o.steps {
		rs, err := e.oneStep(ctx, run, i)
		for _, who := range []string{"pa", "hpa"} {
			r, ok := rs[who]
			label := map[string]string{"pa": "PodAutoscaler", "hpa": "stock HPA"}[who]
			if !ok {
				detail.Rows = append(detail.Rows, []string{fmt.Sprint(i + 1), phaseOffset(i, e.sync).String(), label, "", "", "", "", "failed"})
				continue
			}
			detail.Rows = append(detail.Rows, []string{fmt.Sprint(i + 1), phaseOffset(i, e.sync).String(), label,
				fmt.Sprintf("%d → %d", r.Before, r.After), secs(r.Lag()), secs(r.Decision()), secs(r.Startup()), secs(r.Ready)})
			if who == "pa" {
				pa = append(pa, r)
			} else {
				hpa = append(hpa, r)
			}
		}
		if err != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("step %d: %v", i+1, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	summary := stepSummary(pa, hpa)
	sec.Tables = []report.Table{summary, detail}
	ps, hs := summarize(pa), summarize(hpa)
	sec.Headline = []string{fmt.Sprintf("%s: PodAutoscaler %s median (worst %s) against the stock HPA's %s (worst %s): %s the median, %s the worst; %d and %d of %d steps",
		kind.name, secs(ps[0].Median), secs(ps[0].Worst), secs(hs[0].Median), secs(hs[0].Worst),
		ratio(ps[0].Median, hs[0].Median), ratio(ps[0].Worst, hs[0].Worst), len(pa), len(hpa), e.o.steps)}
	return sec, nil
}

// stepSummary is the table of medians, worst cases and ratios.
func stepSummary(pa, hpa []reaction) report.Table {
	ps, hs := summarize(pa), summarize(hpa)
	t := report.Table{Header: []string{"", "steps", "total: median", "total: worst", "metric lag: median", "decision: median", "pod start-up: median"}}
	row := func(name string, n int, s [4]stageSummary) []string {
		return []string{name, fmt.Sprint(n), secs(s[0].Median), secs(s[0].Worst), secs(s[1].Median), secs(s[2].Median), secs(s[3].Median)}
	}
	t.Rows = append(t.Rows, row("PodAutoscaler", len(pa), ps), row("stock HPA", len(hpa), hs))
	t.Rows = append(t.Rows, []string{"PodAutoscaler / stock HPA", "", ratio(ps[0].Median, hs[0].Median), ratio(ps[0].Worst, hs[0].Worst),
		ratio(ps[1].Median, hs[1].Median), ratio(ps[2].Median, hs[2].Median), ratio(ps[3].Median, hs[3].Median)})
	return t
}

// waitMetric waits until both Deployments' metric sources serve a value.
func (e *env) waitMetric(ctx context.Context, kind stepKind) error {
	return framework.Poll(ctx, 3*time.Minute, kind.name+" metric served for both Deployments", func(ctx context.Context) (bool, string, error) {
		for _, hpa := range []bool{false, true} {
			name := kind.name + map[bool]string{false: "-pa", true: "-hpa"}[hpa]
			v, err := kind.read(ctx, name, hpa)
			if err != nil || math.IsNaN(v) {
				return false, fmt.Sprintf("%s: %v %v", name, v, err), nil
			}
		}
		return true, "", nil
	})
}

// oneStep resets both Deployments to one pod at the low load with fresh
// autoscalers (no stabilization window or history from the step before),
// waits whole sync periods and the phase offset of step i, steps the load
// and times both reactions.
func (e *env) oneStep(ctx context.Context, run *stepRun, i int) (map[string]reaction, error) {
	kind := run.kind
	for _, r := range run.rates {
		r.set(lowRate)
	}
	if err := e.reset(ctx, run, i); err != nil {
		return nil, err
	}
	created := time.Now()
	// At least 45 s: a shorter wait leaves the last step's tail in a 1m rate window.
	settle := max(3*e.sync, 45*time.Second)
	if err := sleep(ctx, time.Until(created.Add(settle+phaseOffset(i, e.sync)))); err != nil {
		return nil, err
	}
	before := map[string]int32{}
	for _, who := range []string{"pa", "hpa"} {
		n, err := e.c.Replicas(ctx, "Deployment", loadNamespace, kind.name+"-"+who)
		if err != nil {
			return nil, err
		}
		before[who] = n
	}
	step := time.Now()
	for _, r := range run.rates {
		r.set(highRate)
	}
	samples := e.observe(ctx, kind, step)
	out := map[string]reaction{}
	var errs []error
	for _, who := range []string{"pa", "hpa"} {
		r, err := reactionOf(samples[who], kind.threshold, before[who])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", who, err))
			continue
		}
		out[who] = r
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%v", errs)
	}
	return out, nil
}

// reset deletes the autoscalers, scales both Deployments to one pod, waits
// until only that pod serves, and creates fresh autoscalers for step i.
func (e *env) reset(ctx context.Context, run *stepRun, i int) error {
	kind := run.kind
	pas := run.pp.AutoscalingV1alpha1().PodAutoscalers(loadNamespace)
	hpas := e.c.Client.AutoscalingV2().HorizontalPodAutoscalers(loadNamespace)
	if i > 0 {
		if err := pas.Delete(ctx, fmt.Sprintf("%s-pa-%d", kind.name, i-1), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PodAutoscaler: %w", err)
		}
		if err := hpas.Delete(ctx, fmt.Sprintf("%s-hpa-%d", kind.name, i-1), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete HPA: %w", err)
		}
	}
	for _, who := range []string{"pa", "hpa"} {
		name := kind.name + "-" + who
		s, err := e.c.Client.AppsV1().Deployments(loadNamespace).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get scale %s: %w", name, err)
		}
		s.Spec.Replicas = 1
		if _, err := e.c.Client.AppsV1().Deployments(loadNamespace).UpdateScale(ctx, name, s, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("scale %s to 1: %w", name, err)
		}
		err = framework.Poll(ctx, 2*time.Minute, name+" at one pod", func(ctx context.Context) (bool, string, error) {
			pods, err := e.c.Client.CoreV1().Pods(loadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			if err != nil {
				return false, "", nil
			}
			ready := e.readyEndpoints(ctx, name)
			return len(pods.Items) == 1 && ready == 1, fmt.Sprintf("%d pods, %d ready endpoints", len(pods.Items), ready), nil
		})
		if err != nil {
			return err
		}
	}
	pa := framework.PodAutoscalerYAML(fmt.Sprintf("%s-pa-%d", kind.name, i), "deployment", kind.name+"-pa", 1, maxReplicas, kind.paSpec)
	if _, err := e.c.ApplyErr(ctx, loadNamespace, pa, false); err != nil {
		return err
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-hpa-%d", kind.name, i)}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: kind.name + "-hpa"},
		MinReplicas:    ptr.To[int32](1), MaxReplicas: maxReplicas, Metrics: []autoscalingv2.MetricSpec{kind.hpa},
	}}
	if _, err := hpas.Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create HPA: %w", err)
	}
	return nil
}

// observe looks at both Deployments every half second from the step until
// both have kept their replicas and ready endpoints for three sync periods
// (at least 30 s) with every replica ready, or stepTimeout.
func (e *env) observe(ctx context.Context, kind stepKind, step time.Time) map[string][]sample {
	out := map[string][]sample{}
	hold := max(3*e.sync, 30*time.Second)
	stableSince := map[string]time.Duration{}
	for ctx.Err() == nil && time.Since(step) < stepTimeout {
		stable := 0
		for _, who := range []string{"pa", "hpa"} {
			name := kind.name + "-" + who
			metric, err := kind.read(ctx, name, who == "hpa")
			if err != nil {
				metric = math.NaN()
			}
			replicas, err := e.c.Replicas(ctx, "Deployment", loadNamespace, name)
			if err != nil {
				continue // no look this time
			}
			s := sample{At: time.Since(step), Metric: metric, Replicas: replicas, Ready: e.readyEndpoints(ctx, name)}
			prev := out[who]
			if len(prev) == 0 || prev[len(prev)-1].Replicas != s.Replicas || prev[len(prev)-1].Ready != s.Ready {
				stableSince[who] = s.At
			}
			out[who] = append(prev, s)
			if s.Replicas > 1 && s.Ready >= int(s.Replicas) && s.At-stableSince[who] >= hold {
				stable++
			}
		}
		if stable == 2 {
			break
		}
		_ = sleep(ctx, 500*time.Millisecond)
	}
	return out
}

// deleteDeployments removes kind's Deployments, Services and autoscalers.
func (e *env) deleteDeployments(ctx context.Context, kind stepKind) {
	for _, who := range []string{"pa", "hpa"} {
		name := kind.name + "-" + who
		_ = e.c.Client.AppsV1().Deployments(loadNamespace).Delete(ctx, name, metav1.DeleteOptions{})
		_ = e.c.Client.CoreV1().Services(loadNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	_ = e.c.Client.AutoscalingV2().HorizontalPodAutoscalers(loadNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if pp, err := versioned.NewForConfig(e.c.Config); err == nil {
		_ = pp.AutoscalingV1alpha1().PodAutoscalers(loadNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
}

// cpuKind scales on cpu Utilization 50%; both autoscalers read
// metrics.k8s.io, which metrics-server serves.
func (e *env) cpuKind() stepKind {
	return stepKind{
		name: "cpu", title: "cpu step: PodAutoscaler and stock HPA, both on metrics-server",
		intro: fmt.Sprintf("Two identical Deployments of the workload image (cpu request 100m, no limit), one under a PodAutoscaler, one under the stock HPA, "+
			"both cpu Utilization 50%%, 1 to %d pods. Both read `metrics.k8s.io`, served by metrics-server %s at its default resolution (15s) "+
			"registered as its APIService: at the chart's defaults podpilot does not serve that group (resourceMetrics.enabled=false) and its "+
			"autoscaler reads cpu through the kube-apiserver like the HPA (cmd/adapter/app/autoscaler.go). "+
			"Each step: both reset to one pod at %d queries/s (25%% of the request), fresh autoscalers, %s (three sync periods, at least 45 s) plus the step's phase "+
			"offset, then %d queries/s (200%%: 4 pods at 50%%). Metric lag: step → metrics.k8s.io first serves an average above 55%% (target + tolerance).",
			maxReplicas, metricsServerVersion, lowRate*batch, max(3*e.sync, 45*time.Second), highRate*batch),
		paSpec: "  resourceMetrics:\n  - resourceName: cpu\n    targetType: Utilization\n    averageUtilization: 50\n",
		hpa: autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
		threshold: 55,
		read:      func(ctx context.Context, name string, _ bool) (float64, error) { return e.cpuUtilization(ctx, name) },
	}
}

// cpuUtilization is the average cpu Utilization (% of the 100m request) of
// Deployment name's pods in metrics.k8s.io.
func (e *env) cpuUtilization(ctx context.Context, name string) (float64, error) {
	b, err := e.c.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+loadNamespace+"/pods?labelSelector=app%3D"+name)
	if err != nil {
		return math.NaN(), err
	}
	var l metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(b, &l); err != nil {
		return math.NaN(), fmt.Errorf("decode pod metrics: %w", err)
	}
	if len(l.Items) == 0 {
		return math.NaN(), fmt.Errorf("no pod metrics for %s", name)
	}
	var sum float64
	for _, p := range l.Items {
		for _, c := range p.Containers {
			sum += c.Usage.Cpu().AsApproximateFloat64()
		}
	}
	return 100 * sum / (0.1 * float64(len(l.Items))), nil
}

// customKind scales on zdns_vanguard_qps, 2000 per pod (the seed's): the
// HPA through prometheus-adapter, the PodAutoscaler in-process from the same
// rule and Prometheus.
func (e *env) customKind() stepKind {
	return stepKind{
		name: "qps", title: "custom metric step: PodAutoscaler and stock HPA on zdns_vanguard_qps",
		intro: fmt.Sprintf("Two identical Deployments of the workload image, one under a PodAutoscaler, one under the stock HPA, both on the seed's "+
			"`zdns_vanguard_qps` averageValue 2000, 1 to %d pods, from the workload's counter `zdns_vanguard_queries_total` rated by the "+
			"default rule `sum(rate(…[1m])) by (pod)`; Prometheus scrapes the pods every %s. The HPA reads custom.metrics.k8s.io, served by "+
			"prometheus-adapter v0.12.0 (built from its module, on podpilot's default rule file, --metrics-relist-interval=1m as its Helm chart sets) "+
			"registered as its APIService; podpilot's custom APIService is off (apiServices.custom.enabled=false) and the PodAutoscaler reads the "+
			"rule in-process. Steps as above: %d then %d queries/s. Metric lag: step → the source first serves a per-pod average above 2200 "+
			"(target + tolerance): custom.metrics.k8s.io for the HPA, the rule's query on Prometheus for the PodAutoscaler.",
			maxReplicas, e.o.scrape, lowRate*batch, highRate*batch),
		paSpec: "  customMetrics:\n  - metricName: zdns_vanguard_qps\n    averageValue: \"2000\"\n",
		hpa: autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "zdns_vanguard_qps"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("2000"))}}},
		threshold: 2200,
		read:      e.qps,
	}
}

// qps is the per-pod average zdns_vanguard_qps of Deployment name: from
// custom.metrics.k8s.io for the HPA, from the default rule's query on
// Prometheus (what podpilot reads) for the PodAutoscaler.
func (e *env) qps(ctx context.Context, name string, hpa bool) (float64, error) {
	var vals []float64
	if hpa {
		b, err := e.c.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+loadNamespace+"/pods/%2A/zdns_vanguard_qps?labelSelector=app%3D"+name)
		if err != nil {
			return math.NaN(), err
		}
		var l custommetricsv1beta2.MetricValueList
		if err := json.Unmarshal(b, &l); err != nil {
			return math.NaN(), fmt.Errorf("decode custom metrics: %w", err)
		}
		for _, it := range l.Items {
			vals = append(vals, it.Value.AsApproximateFloat64())
		}
	} else {
		q := fmt.Sprintf(`sum(rate(zdns_vanguard_queries_total{namespace=%q,pod=~%q}[1m])) by (pod)`, loadNamespace, name+"-.*")
		byPod, err := e.podValues(ctx, q)
		if err != nil {
			return math.NaN(), err
		}
		// Only the pods that exist, as podpilot matches them: a deleted
		// pod's series stays in a 1m range for a minute.
		pods, err := e.c.Client.CoreV1().Pods(loadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return math.NaN(), fmt.Errorf("list pods of %s: %w", name, err)
		}
		for _, p := range pods.Items {
			if v, ok := byPod[p.Name]; ok && p.DeletionTimestamp == nil {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) == 0 {
		return math.NaN(), fmt.Errorf("no zdns_vanguard_qps for %s", name)
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals)), nil
}

// rulesFile writes podpilot's default rule file for prometheus-adapter.
func rulesFile(dir, content string) (string, error) {
	path := filepath.Join(dir, "prometheus-adapter-rules.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("write prometheus-adapter rules: %w", err)
	}
	return path, nil
}
