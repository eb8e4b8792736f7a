package prediction

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/flight"
)

// DefaultRefresh is how often a forecast model is fitted again, by default.
const DefaultRefresh = 5 * time.Minute

// historyStep is the step of the histories the forecast fits: one minute, chosen by measurement
// in replay (docs/predictive-scaling.md).
const historyStep = time.Minute

// historyOverlap is how much of the newest history held is read again at a refit: its last
// values may have been read before all their samples landed.
const historyOverlap = 2 * historyStep

// fitTimeout bounds one refit once its turn came: reading the history and fitting it.
const fitTimeout = time.Minute

// HistoryRetry is how long a history that could not be read stays so before it is read again.
const HistoryRetry = time.Minute

// MaxStaleFits is how many refreshes a model is served past its refresh while its refit runs or
// fails: a round never waits for a refit, and past this the forecast is off until it lands.
const MaxStaleFits = 1

// maxHistoryReads is how many history reads run at once, whatever the number of keys due: after
// a start (a restart, a new leader) every key's first read is due together, and each may be
// several query_range chunks over a namespace's pods; the others queue, so their fits land
// spread over time.
const maxHistoryReads = 4

// RefreshJitter is the largest share of the refresh by which a fit falls due early, drawn at
// random per fit, so that keys fitted together after a start do not all fall due together again.
const RefreshJitter = 0.2

// errHistoryUnavailable means a metric's history could not be read; the forecast is then off.
var errHistoryUnavailable = errors.New("history unavailable")

// errForecastNotReady means a key's first fit (or its refit, past MaxStaleFits) is still running
// in the background: the round goes on reactively, and the forecast starts once it lands.
var errForecastNotReady = errors.New("the forecast is not ready yet: its history is being read and fitted in the background")

// modelKey is one fitted history: what is distinct for the fitting cost, and how far back it
// reaches. Every PodAutoscaler whose metric has the same key shares its model.
type modelKey struct {
	forecast.Key
	window time.Duration
}

// historyKind says which of metrics.HistorySource's reads serves a history.
type historyKind int

const (
	// objectsHistory is a custom metric's, summed over objects (pods, or the described object).
	objectsHistory historyKind = iota
	// externalHistory is an external metric's.
	externalHistory
	// resourceHistory is a resource or container resource metric's, summed over pods.
	resourceHistory
)

// Plan says how to read one metric's history: its key, the request without its range,
// and which read serves it.
type Plan struct {
	key  modelKey
	req  metrics.HistoryRequest
	kind historyKind
}

// Fit is a model fitted on one history at a time, or why the history could not be fitted
// (refused, an error of forecast.Fit), and when it falls due for a refit.
type Fit struct {
	model   *forecast.Model
	refused error
	at      time.Time
	due     time.Time
}

// Models fits and shares the forecast models: one per distinct history (modelKey), fitted again
// every refresh, never per round, whatever the number of PodAutoscalers on it. Its policy:
//   - A round never waits for a fit. It takes the fit held for its key (a model, or a refusal:
//     history too short, gappy, not seasonal), which is reused until it falls due, a refresh
//     after its read (less a random RefreshJitter of it); a due one starts a refit in the
//     background and is served meanwhile, a model for up to MaxStaleFits refreshes more. With
//     no fit held (a start, a new key, an evicted one), the round starts the fit in the
//     background and goes on without a forecast (errForecastNotReady).
//   - A refusal is held like a model: it is tried again at its refresh, never within.
//   - A history that could not be read is read again after HistoryRetry: a failing Prometheus
//     costs one read per key per HistoryRetry.
//   - One refit per key runs at a time; at most maxHistoryReads reads and the fitSlots fits run
//     at once, the others queue (for up to a refresh), and each is bounded by fitTimeout.
//   - The histories and fits held are bounded by maxEntries (see modelCache).
type Models struct {
	source  metrics.HistorySource
	clock   clock.PassiveClock
	refresh time.Duration
	group   *flight.Group[modelKey, Fit]
	// readSlots bounds the history reads running at once, fitSlots the fits (CPU).
	readSlots, fitSlots chan struct{}
	cache               *modelCache
}

// NewModels returns the models read from source, refitted every refresh, at most maxEntries of
// them held; nil without a source. observe, when set, is told the cache's size at every change.
func NewModels(source metrics.HistorySource, clk clock.PassiveClock, refresh time.Duration, maxEntries int, observe func(CacheSize)) (*Models, error) {
	if source == nil {
		return nil, nil
	}
	g, err := flight.New[modelKey, Fit](clk, flight.Policy{MaxAge: min(HistoryRetry, refresh), KeepErrors: true, MaxEntries: maxEntries})
	if err != nil {
		return nil, fmt.Errorf("build forecast model cache: %w", err)
	}
	return &Models{source: source, clock: clk, refresh: refresh, group: g,
		readSlots: make(chan struct{}, maxHistoryReads), fitSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		cache: newModelCache(refresh, maxEntries, observe)}, nil
}

// get returns the fit of p's history held now, starting its refit in the background when it is
// due or none is held; it never waits for one.
func (m *Models) get(ctx context.Context, p Plan) (Fit, error) {
	if m == nil {
		return Fit{}, fmt.Errorf("no history source: %w", errHistoryUnavailable)
	}
	now := m.clock.Now()
	held, ok := m.cache.use(p.key)
	if ok && now.Before(held.due) {
		return held, nil
	}
	pending := m.Start(ctx, p)
	servable := m.servable(held, ok, now)
	if pending.Done() { // a refit just made, or a failed read within HistoryRetry
		a, err := pending.Wait(ctx)
		switch {
		case err == nil:
			return a.Value, nil
		case !servable:
			return Fit{}, err
		}
	}
	if servable {
		return held, nil
	}
	if ok {
		return Fit{}, fmt.Errorf("the model of %s fitted at %s is more than %d refreshes old and its refit has not landed: %w: %w",
			p.key.Metric, held.at.UTC().Format(time.RFC3339), 1+MaxStaleFits, errForecastNotReady, errHistoryUnavailable)
	}
	return Fit{}, fmt.Errorf("history of %s: %w: %w", p.key.Metric, errForecastNotReady, errHistoryUnavailable)
}

// servable reports whether the held fit f (ok: one is held) may answer at now while its refit
// runs: a refusal until the refit says otherwise, a model for MaxStaleFits refreshes past its due.
func (m *Models) servable(f Fit, ok bool, now time.Time) bool {
	return ok && (f.model == nil || now.Before(f.due.Add(time.Duration(MaxStaleFits)*m.refresh)))
}

// Start asks for p's fit: the refit in flight, an answer the flight policy lets it reuse, or a new
// refit in the background. It never waits; the caller may (tests do).
func (m *Models) Start(ctx context.Context, p Plan) flight.Pending[Fit] {
	return m.group.Ask(ctx, p.key, true, func(ctx context.Context) (Fit, error) { return m.refit(ctx, p) })
}

// refit returns the fit of p's history held and not yet due, or waits its turn (up to a refresh),
// reads the history up to now (the part since the history held, when there is one) and fits it,
// within fitTimeout. Each value is the load around its time: the query is evaluated half a step
// later.
func (m *Models) refit(ctx context.Context, p Plan) (Fit, error) {
	if f, ok := m.cache.fresh(p.key, m.clock.Now()); ok {
		return f, nil
	}
	queued, cancel := context.WithTimeout(ctx, m.refresh)
	defer cancel()
	if err := acquire(queued, m.readSlots); err != nil {
		return Fit{}, fmt.Errorf("wait to read the history of %s in namespace %s: %w: %w", p.key.Metric, p.key.Namespace, errHistoryUnavailable, err)
	}
	defer release(m.readSlots)
	ctx, cancel = context.WithTimeout(ctx, fitTimeout)
	defer cancel()
	now := m.clock.Now()
	end := now.Add(-historyStep / 2).Truncate(historyStep)
	start := end.Add(-p.key.window)
	s := m.cache.heldFrom(p.key, start, end)
	req := p.req
	req.Start, req.End, req.Step = s.End().Add(historyStep/2), end.Add(historyStep/2), historyStep
	values, err := m.read(p.kind)(ctx, req)
	if err != nil {
		return Fit{}, fmt.Errorf("read the history of %s in namespace %s: %w: %w", p.key.Metric, p.key.Namespace, errHistoryUnavailable, err)
	}
	s.Values = append(s.Values, values...)
	if err := acquire(ctx, m.fitSlots); err != nil {
		return Fit{}, fmt.Errorf("fit the history of %s in namespace %s: %w", p.key.Metric, p.key.Namespace, err)
	}
	f := Fit{at: now, due: now.Add(m.refresh - time.Duration(rand.Float64()*RefreshJitter*float64(m.refresh)))}
	f.model, err = forecast.Fit(s, forecast.HoltWinters)
	release(m.fitSlots)
	if err != nil {
		f.refused = fmt.Errorf("fit the history of %s: %w", p.key.Metric, err)
	}
	m.cache.keep(p.key, s, f, now)
	return f, nil
}

// read returns the read of metrics.HistorySource that serves histories of kind.
func (m *Models) read(kind historyKind) func(context.Context, metrics.HistoryRequest) ([]float64, error) {
	switch kind {
	case externalHistory:
		return m.source.ExternalHistory
	case resourceHistory:
		return m.source.ResourceHistory
	}
	return m.source.ObjectsHistory
}

// acquire takes a slot of slots, or fails when ctx ends first.
func acquire(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives a slot of slots back.
func release(slots chan struct{}) { <-slots }
