package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Phase is one autoscaler kind's run at one N.
type Phase struct {
	kind kind
	n    int
	// readyAfter is how long until every autoscaler read its metric.
	readyAfter time.Duration
	// Steady state, per round (a sync period), over Rounds rounds before the step.
	rounds                              float64
	queries, promQueries                float64
	writes                              map[string]float64
	cpu                                 time.Duration // of the autoscaler's process, per round
	rssMiB                              float64
	kcmReconcileMean, kcmReconcileCount float64
	// Per second over the steady window: the autoscaler's reconciliations (one per
	// object per sync; upstream's horizontal_pod_autoscaler_controller_reconciliations_total,
	// podpilot's podpilot_ prefixed copy) and every client's API requests
	// (kube-apiserver's apiserver_request_total); queueWaitP99 bounds from above
	// the 99th percentile of the time an object waited in the autoscaler's
	// work queue (workqueue_queue_duration_seconds).
	reconcilesPerSec, apiRequestsPerSec, queueWaitP99 float64
	failedGet                                         int
	// paRoundSpans are the spans of the PodAutoscaler status-write bursts of the steady window.
	paRoundSpans []float64
	// paRoundMax bounds the longest round of the steady window from above
	// (podpilot_autoscaler_round_duration_seconds' highest bucket that gained
	// observations; a round runs from the first sync after an idle queue until
	// it is idle again, so with rounds aligned to one scrape it is the full
	// round of every PodAutoscaler due then); paLateness is
	// podpilot_autoscaler_round_lateness_seconds at the window's end.
	paRoundMax, paLateness float64
	paWrites               int
	histograms             []string
	// The step 100 → 300 per pod: time to the first and last Deployment resized.
	first, last time.Duration
	resized     int
	stepWrites  map[string]float64
	reactions   []float64
}

// Scale runs scenarios b and c at n: the same n Deployments (2 pods each,
// over the namespaces) first with stock HPAs, then with PodAutoscalers.
func (e *Env) Scale(ctx context.Context, n int) ([]Phase, error) {
	nss := make([]string, e.Cfg.Namespaces)
	for i := range nss {
		nss[i] = e.namespace(i)
	}
	if err := e.ensureNamespaces(ctx, nss...); err != nil {
		return nil, err
	}
	ws := e.benchWorkloads(n)
	e.logf("b/c N=%d: creating %d Deployments (%d pods)", n, n, n*e.podsPerTarget())
	// A smaller size's phases left its Deployments where their step took
	// them: each phase scales every one back and waits for the pods.
	if err := e.createDeployments(ctx, ws, int32(e.podsPerTarget())); err != nil {
		return nil, err
	}
	var out []Phase
	kinds := []kind{kindHPA, kindPA}
	if e.Cfg.StockHPAMax > 0 && n > e.Cfg.StockHPAMax {
		e.logf("b/c N=%d: above --stock-hpa-max=%d, PodAutoscalers only", n, e.Cfg.StockHPAMax)
		kinds = []kind{kindPA}
	}
	for _, k := range kinds {
		p, err := e.runPhase(ctx, k, ws, nss)
		if err != nil {
			return out, fmt.Errorf("%s at N=%d: %w", k, n, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// runPhase resets the workloads to podsPerTarget pods at 100 per pod,
// creates one autoscaler of k each, measures the steady state, steps the load
// to StepTo per pod and waits for every Deployment to be resized, then
// deletes the autoscalers.
func (e *Env) runPhase(ctx context.Context, k kind, ws []workload, nss []string) (Phase, error) {
	p := Phase{kind: k, n: len(ws)}
	for _, w := range ws {
		e.Load.Set(w.ns, w.name, float64(targetPerPod*e.podsPerTarget()))
	}
	if err := e.scaleTo(ctx, ws, int32(e.podsPerTarget())); err != nil {
		return p, err
	}
	if err := e.waitPrometheusAt(ctx, benchNSPrefix+"n[0-9]+", targetPerPod); err != nil {
		return p, err
	}
	e.logf("%s N=%d: creating the autoscalers", k, len(ws))
	start := time.Now()
	if err := e.createAutoscalers(ctx, k, ws); err != nil {
		return p, err
	}
	defer func() {
		if err := e.deleteAutoscalers(context.WithoutCancel(ctx), k, nss); err != nil {
			e.logf("%v", err)
		}
	}()
	timeout := 3*time.Minute + time.Duration(len(ws))*200*time.Millisecond
	err := framework.PollEvery(ctx, 2*time.Second, timeout, fmt.Sprintf("%d %ss reading their metric", len(ws), k), func(ctx context.Context) (bool, string, error) {
		n, err := e.activeAutoscalers(ctx, k, nss)
		return n == len(ws), fmt.Sprintf("%d active", n), err
	})
	if err != nil {
		return p, err
	}
	p.readyAfter = time.Since(start)
	if err := e.steady(ctx, &p, nss); err != nil {
		return p, err
	}
	return p, e.step(ctx, &p, ws)
}

// roundHistogram is podpilot's histogram of autoscaler round durations;
// reconciliations is kube-controller-manager's HPA reconciliation counter
// (podpilot's has the podpilot_ prefix); queueWait is client-go's work queue
// wait histogram.
const (
	roundHistogram  = "podpilot_autoscaler_round_duration_seconds"
	reconciliations = "horizontal_pod_autoscaler_controller_reconciliations_total"
	queueWait       = "workqueue_queue_duration_seconds"
)

// podsPerTarget is Config.PodsPerTarget, 2 unless set.
func (e *Env) podsPerTarget() int {
	if e.Cfg.PodsPerTarget > 0 {
		return e.Cfg.PodsPerTarget
	}
	return baseReplicas
}

// stepTo is Config.StepTo, 300 per pod unless set.
func (e *Env) stepTo() int {
	if e.Cfg.StepTo > 0 {
		return e.Cfg.StepTo
	}
	return 300
}

// steady measures Rounds sync periods of the steady state.
func (e *Env) steady(ctx context.Context, p *Phase, nss []string) error {
	window := time.Duration(e.Cfg.Rounds) * e.Cfg.SyncPeriod
	e.logf("%s N=%d: steady state for %s", p.kind, p.n, window)
	f0, err := e.failedGetPodsMetric(ctx, nss)
	if err != nil {
		return err
	}
	s0, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	if err := sleep(ctx, window); err != nil {
		return err
	}
	s1, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	f1, err := e.failedGetPodsMetric(ctx, nss)
	if err != nil {
		return err
	}
	p.rounds = s1.at.Sub(s0.at).Seconds() / e.Cfg.SyncPeriod.Seconds()
	p.queries = (s1.podpilotQueries() - s0.podpilotQueries()) / p.rounds
	p.promQueries = (s1.promQueries() - s0.promQueries()) / p.rounds
	p.writes = s1.writes(s0)
	p.failedGet = f1 - f0
	p.rssMiB = float64(e.PodpilotRSS()) / (1 << 20)
	p.histograms = s1.autoscalerHistograms(s0)
	secs := s1.at.Sub(s0.at).Seconds()
	p.apiRequestsPerSec = (s1.apiserver.Sum("apiserver_request_total", nil) - s0.apiserver.Sum("apiserver_request_total", nil)) / secs
	if p.kind == kindHPA {
		p.reconcilesPerSec = (s1.kcm.Sum(reconciliations, nil) - s0.kcm.Sum(reconciliations, nil)) / secs
		p.queueWaitP99 = s1.kcm.HistogramQuantileBound(s0.kcm, queueWait, map[string]string{"name": "horizontalpodautoscaler"}, 0.99)
		p.cpu = time.Duration(float64(s1.kcmCPU-s0.kcmCPU) / p.rounds)
		p.kcmReconcileMean, p.kcmReconcileCount = histogramMean(s1.kcm, s0.kcm,
			"horizontal_pod_autoscaler_controller_reconciliation_duration_seconds")
	} else {
		p.cpu = time.Duration(float64(s1.podpilotCPU-s0.podpilotCPU) / p.rounds)
		p.reconcilesPerSec = (s1.podpilot.Sum("podpilot_"+reconciliations, nil) - s0.podpilot.Sum("podpilot_"+reconciliations, nil)) / secs
		p.queueWaitP99 = s1.podpilot.HistogramQuantileBound(s0.podpilot, queueWait, map[string]string{"name": "podpilot-autoscaler"}, 0.99)
		writes := e.Watch.PodAutoscalerWrites(s0.at, s1.at)
		p.paWrites = len(writes)
		p.paRoundSpans = burstSpans(writes, e.Cfg.SyncPeriod/3)
		p.paRoundMax = s1.podpilot.HistogramMaxBound(s0.podpilot, roundHistogram, nil)
		p.paLateness = s1.podpilot.Sum("podpilot_autoscaler_round_lateness_seconds", nil)
	}
	return nil
}

// step sets every workload to StepTo per pod and waits until each
// Deployment's spec.replicas changed.
func (e *Env) step(ctx context.Context, p *Phase, ws []workload) error {
	s0, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	e.setLoad(ws, e.stepTo())
	e.logf("%s N=%d: stepped %d → %d per pod; waiting for every Deployment to resize", p.kind, p.n, targetPerPod, e.stepTo())
	for _, at := range e.waitResized(ctx, ws, t0) {
		p.reactions = append(p.reactions, at.Sub(t0).Seconds())
	}
	p.resized = len(p.reactions)
	s := stats.Summarize(p.reactions)
	p.first = time.Duration(s.Min * float64(time.Second))
	p.last = time.Duration(s.Max * float64(time.Second))
	s1, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	p.stepWrites = s1.writes(s0)
	return nil
}

// burstSpans groups times (ascending) into bursts separated by more than
// gap and returns each burst's span in seconds.
func burstSpans(times []time.Time, gap time.Duration) []float64 {
	var out []float64
	for i := 0; i < len(times); {
		j := i
		for j+1 < len(times) && times[j+1].Sub(times[j]) <= gap {
			j++
		}
		out = append(out, times[j].Sub(times[i]).Seconds())
		i = j + 1
	}
	return out
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ScaleAll runs Scale at every size, ascending, reusing the Deployments of
// the smaller sizes.
func (e *Env) ScaleAll(ctx context.Context) (map[int][]Phase, error) {
	out := map[int][]Phase{}
	for _, n := range e.Cfg.Sizes {
		ph, err := e.Scale(ctx, n)
		out[n] = ph
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
