package telemetry

import (
	"errors"
	"fmt"
	"sync"
	"time"

	compbasemetrics "k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	podpilotlisters "github.com/podpilot/podpilot/pkg/generated/listers/autoscaling/v1alpha1"
)

// hpaSubsystem names the reconciliation and metric computation metrics as kube-controller-manager
// names its HPA controller's, behind the podpilot namespace, so that HPA dashboards translate.
const hpaSubsystem = "horizontal_pod_autoscaler_controller"

// Label values of the reconciliation and metric computation metrics, as upstream's.
const (
	actionScaleUp   = "scale_up"
	actionScaleDown = "scale_down"
	actionNone      = "none"
	// ErrorSpec is the error label of an error in the PodAutoscaler's spec or its target's.
	ErrorSpec = "spec"
	// ErrorInternal is the error label of any other error.
	ErrorInternal = "internal"
	// ErrorNone is the error label of a sync without an error.
	ErrorNone = "none"
)

// Metrics records the autoscaler's own metrics. Create it with New; a nil *Metrics records
// nothing.
type Metrics struct {
	registry compbasemetrics.KubeRegistry
	// spec are the errors counted as ErrorSpec (see ErrorKind).
	spec []error

	reconciliations     *compbasemetrics.CounterVec
	reconcileDuration   *compbasemetrics.HistogramVec
	computations        *compbasemetrics.CounterVec
	computationDuration *compbasemetrics.HistogramVec
	roundDuration       *compbasemetrics.Histogram
	roundLateness       *compbasemetrics.Gauge
	queueDepth          *compbasemetrics.Gauge
	requests            *compbasemetrics.CounterVec
	calls               *compbasemetrics.CounterVec
	roundPanics         *compbasemetrics.Counter
	models              *compbasemetrics.Gauge
	modelBytes          *compbasemetrics.Gauge

	rounds rounds
}

// New creates the autoscaler's metrics and registers them on r; spec are the errors that are
// the spec's fault (see ErrorKind). The per-PodAutoscaler series are registered by Watch, given
// the lister they are read from.
func New(r compbasemetrics.KubeRegistry, spec ...error) (*Metrics, error) {
	// Upstream's buckets: 1 ms to 16 s.
	buckets := compbasemetrics.ExponentialBuckets(0.001, 2, 15)
	m := &Metrics{
		registry: r, spec: spec,
		reconciliations: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Namespace: "podpilot", Subsystem: hpaSubsystem, Name: "reconciliations_total",
			Help: "Syncs of PodAutoscalers, by action (scale_up, scale_down, none) and error (spec, internal, none); " +
				"when several errors happen, the first one is reported.",
			StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"action", "error"}),
		reconcileDuration: compbasemetrics.NewHistogramVec(&compbasemetrics.HistogramOpts{
			Namespace: "podpilot", Subsystem: hpaSubsystem, Name: "reconciliation_duration_seconds",
			Help:    "Duration of a sync of one PodAutoscaler, by action and error.",
			Buckets: buckets, StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"action", "error"}),
		computations: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Namespace: "podpilot", Subsystem: hpaSubsystem, Name: "metric_computation_total",
			Help: "Metric computations, by the action the metric proposed, error and metric_type " +
				"(Resource, Pods, Object, External, ContainerResource, as autoscaling/v2's metric source types).",
			StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"action", "error", "metric_type"}),
		computationDuration: compbasemetrics.NewHistogramVec(&compbasemetrics.HistogramOpts{
			Namespace: "podpilot", Subsystem: hpaSubsystem, Name: "metric_computation_duration_seconds",
			Help:    "Duration of reading and computing one metric of one PodAutoscaler, by action, error and metric_type.",
			Buckets: buckets, StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"action", "error", "metric_type"}),
		roundDuration: compbasemetrics.NewHistogram(&compbasemetrics.HistogramOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "round_duration_seconds",
			Help:    "Duration of a round: from the first sync after an idle queue until the queue is empty and idle again.",
			Buckets: buckets, StabilityLevel: compbasemetrics.ALPHA,
		}),
		roundLateness: compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "round_lateness_seconds",
			Help:           "How much later than one sync period after the previous round's start the last round started (0 when on time or early).",
			StabilityLevel: compbasemetrics.ALPHA,
		}),
		queueDepth: compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "queue_depth",
			Help:           "PodAutoscalers waiting in the queue to be synced now.",
			StabilityLevel: compbasemetrics.ALPHA,
		}),
		requests: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "metric_requests_total",
			Help:           "Metric reads asked by PodAutoscalers, by source (custom, resource, external, object).",
			StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"source"}),
		calls: compbasemetrics.NewCounterVec(&compbasemetrics.CounterOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "metric_source_calls_total",
			Help: "Calls made to a metric source for those reads, by source; a custom, object or external call is one Prometheus query. " +
				"The difference to podpilot_autoscaler_metric_requests_total is what batching saved.",
			StabilityLevel: compbasemetrics.ALPHA,
		}, []string{"source"}),
		roundPanics: compbasemetrics.NewCounter(&compbasemetrics.CounterOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "round_panics_total",
			Help: "Rounds of one PodAutoscaler that panicked (a bug in podpilot): the round failed for that object, " +
				"with ScalingActive False InternalError, and was retried; the process kept serving.",
			StabilityLevel: compbasemetrics.ALPHA,
		}),
		models: compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "prediction_models",
			Help:           "Forecast models held (one per distinct history of PodAutoscalers with spec.prediction), at most --autoscaler-prediction-max-models.",
			StabilityLevel: compbasemetrics.ALPHA,
		}),
		modelBytes: compbasemetrics.NewGauge(&compbasemetrics.GaugeOpts{
			Namespace: "podpilot", Subsystem: "autoscaler", Name: "prediction_model_bytes",
			Help:           "About how many bytes the forecast models held take, with the histories their refits extend.",
			StabilityLevel: compbasemetrics.ALPHA,
		}),
	}
	for _, c := range []compbasemetrics.Registerable{m.reconciliations, m.reconcileDuration, m.computations,
		m.computationDuration, m.roundDuration, m.roundLateness, m.queueDepth, m.requests, m.calls, m.roundPanics, m.models, m.modelBytes} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("register autoscaler metrics: %w", err)
		}
	}
	return m, nil
}

// ModelCache records the size of the forecast model cache.
func (m *Metrics) ModelCache(s prediction.CacheSize) {
	if m == nil {
		return
	}
	m.models.Set(float64(s.Entries))
	m.modelBytes.Set(float64(s.Bytes))
}

// Watch registers the per-PodAutoscaler series, read from lister while running() is true (with
// one series per object and metric when perObject, for the objects owns accepts: those this
// replica runs when the autoscaler is sharded; nil accepts every one), and sets the period rounds
// are measured against, the sync period.
func (m *Metrics) Watch(lister podpilotlisters.PodAutoscalerLister, running func() bool, owns func(namespace, name string) bool,
	period time.Duration, perObject bool) error {
	if m == nil {
		return nil
	}
	m.rounds.period = period
	if err := m.registry.CustomRegister(newObjectCollector(lister, running, owns, perObject)); err != nil {
		return fmt.Errorf("register PodAutoscaler metrics: %w", err)
	}
	return nil
}

// Counter returns the fetcher's Counter; nil without metrics.
func (m *Metrics) Counter() metrics.Counter {
	if m == nil {
		return nil
	}
	return fetchCounter{m}
}

// fetchCounter counts the fetcher's requests and source calls.
type fetchCounter struct{ m *Metrics }

func (f fetchCounter) Requested(source string) { f.m.requests.WithLabelValues(source).Inc() }
func (f fetchCounter) Called(source string)    { f.m.calls.WithLabelValues(source).Inc() }

// RoundPanicked counts a round that panicked.
func (m *Metrics) RoundPanicked() {
	if m == nil {
		return
	}
	m.roundPanics.Inc()
}

// SyncStarted records a sync starting at now with queued PodAutoscalers left in the queue.
func (m *Metrics) SyncStarted(now time.Time, queued int) {
	if m == nil {
		return
	}
	m.queueDepth.Set(float64(queued))
	if late, ok := m.rounds.started(now); ok {
		m.roundLateness.Set(late.Seconds())
	}
}

// SyncDone records a sync ending at now with queued PodAutoscalers in the queue.
func (m *Metrics) SyncDone(now time.Time, queued int) {
	if m == nil {
		return
	}
	m.queueDepth.Set(float64(queued))
	if d, ok := m.rounds.done(now, queued); ok {
		m.roundDuration.Observe(d.Seconds())
	}
}

// rounds tells rounds apart: a round starts with a sync while none runs and none is queued, and
// ends when the last sync ends with nothing queued.
type rounds struct {
	mu     sync.Mutex
	period time.Duration
	active int
	start  time.Time
	prev   time.Time
}

// started counts a sync starting at now; when it starts a round, it returns how late the round
// is against the previous round's start plus one period (never negative).
func (r *rounds) started(now time.Time) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active++
	if !r.start.IsZero() {
		return 0, false
	}
	r.start = now
	prev := r.prev
	r.prev = now
	if prev.IsZero() {
		return 0, false
	}
	return max(0, now.Sub(prev.Add(r.period))), true
}

// done counts a sync ending at now; when it ends the round, it returns the round's duration.
func (r *rounds) done(now time.Time, queued int) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	if r.active > 0 || queued > 0 || r.start.IsZero() {
		return 0, false
	}
	d := now.Sub(r.start)
	r.start = time.Time{}
	return d, true
}

// Reconcile observes one sync of one PodAutoscaler; a nil *Reconcile observes nothing.
type Reconcile struct {
	m       *Metrics
	clock   clock.PassiveClock
	start   time.Time
	action  string
	errKind string
	fetches map[decision.MetricID]time.Duration
}

// Reconcile starts observing a sync.
func (m *Metrics) Reconcile(clk clock.PassiveClock) *Reconcile {
	if m == nil {
		return nil
	}
	return &Reconcile{m: m, clock: clk, start: clk.Now(), action: actionNone}
}

// Failed records err as the sync's error unless an earlier one was recorded.
func (r *Reconcile) Failed(err error) {
	if r == nil || err == nil || r.errKind != "" {
		return
	}
	r.errKind = ErrorKind(err, r.m.spec)
}

// Fetched records how long reading the metric id took.
func (r *Reconcile) Fetched(id decision.MetricID, took time.Duration) {
	if r == nil {
		return
	}
	if r.fetches == nil {
		r.fetches = map[decision.MetricID]time.Duration{}
	}
	r.fetches[id] = took
}

// Decided records each metric's computation, and the sync's action and error: a refused decision
// (metrics failed) is the sync's error, as upstream, and so is a failed rescale.
func (r *Reconcile) Decided(d decision.Decision, current int32, rescaleErr error) {
	if r == nil {
		return
	}
	for _, s := range d.Statuses {
		action, kind := actionNone, ErrorKind(s.Err, r.m.spec)
		if s.Err == nil {
			action = actionOf(current, s.Result.Replicas)
		}
		dur := r.fetches[s.ID()]
		r.m.computations.WithLabelValues(action, kind, string(s.Kind)).Inc()
		r.m.computationDuration.WithLabelValues(action, kind, string(s.Kind)).Observe(dur.Seconds())
	}
	if d.MetricsErr != nil && d.Metric == "" {
		r.Failed(d.MetricsErr)
	}
	r.Failed(rescaleErr)
	if d.Rescale && rescaleErr == nil {
		r.action = actionOf(current, d.DesiredReplicas)
	}
}

// Done records the sync with its returned error.
func (r *Reconcile) Done(err *error) {
	if r == nil {
		return
	}
	r.Failed(*err)
	if r.errKind == "" {
		r.errKind = ErrorNone
	}
	r.m.reconciliations.WithLabelValues(r.action, r.errKind).Inc()
	r.m.reconcileDuration.WithLabelValues(r.action, r.errKind).Observe(r.clock.Since(r.start).Seconds())
}

func actionOf(current, desired int32) string {
	switch {
	case desired > current:
		return actionScaleUp
	case desired < current:
		return actionScaleDown
	}
	return actionNone
}

// ErrorKind is ErrorSpec for errors in the PodAutoscaler's spec or its target's, those that
// are (errors.Is) one of spec, ErrorInternal otherwise, and ErrorNone for no error.
func ErrorKind(err error, spec []error) string {
	if err == nil {
		return ErrorNone
	}
	for _, s := range spec {
		if errors.Is(err, s) {
			return ErrorSpec
		}
	}
	return ErrorInternal
}
