package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/flight"
)

// historyStep is the step of the histories the forecast fits: one minute, chosen by measurement
// in replay (docs/predictive-scaling.md).
const historyStep = time.Minute

// historyOverlap is how much of the newest history held is read again at a refit: its last
// values may have been read before all their samples landed.
const historyOverlap = 2 * historyStep

// fitTimeout bounds one refit: reading the history and fitting it.
const fitTimeout = time.Minute

// historyRetry is how long a history that could not be read stays so before it is read again.
const historyRetry = time.Minute

// maxStaleFits is how many refreshes a model is served past its refresh while its refit runs or
// fails: a round never waits for a due refit while the model before it is this recent.
const maxStaleFits = 1

// errHistoryUnavailable means a metric's history could not be read; the forecast is then off.
var errHistoryUnavailable = errors.New("history unavailable")

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

// historyPlan says how to read one metric's history: its key, the request without its range,
// and which read serves it.
type historyPlan struct {
	key  modelKey
	req  metrics.HistoryRequest
	kind historyKind
}

// fit is a model fitted on one history at a time, or why the history could not be fitted
// (refused, an error of forecast.Fit).
type fit struct {
	model   *forecast.Model
	refused error
	at      time.Time
}

// models fits and shares the forecast models: one per distinct history (modelKey), fitted again
// every refresh, never per round, whatever the number of PodAutoscalers on it. Its policy: a fit
// or a refusal (history too short, gappy, not seasonal) is reused for refresh from when its read
// started; a history that could not be read is read again after historyRetry, so a failing
// Prometheus costs one read per key per historyRetry, and a blip costs the forecast a minute, not
// a refresh; one refit per key runs at a time, bounded by fitTimeout, and a round waits for it
// within its own deadline only when no model of the key is held: a due refit of a held model runs
// in the background while the held model answers, for up to maxStaleFits refreshes more, so the
// fitting cost never lands on a round. Fits (CPU) run at most fitSlots at a time. It keeps the last
// history read per key, so that a refit reads only the
// values since (and historyOverlap), and drops a key's history and fit when no refit read it for
// three refreshes.
type models struct {
	source  metrics.HistorySource
	clock   clock.PassiveClock
	refresh time.Duration
	group   *flight.Group[modelKey, fit]
	// fitSlots bounds the fits running at once: refits of many keys fall due together.
	fitSlots chan struct{}

	mu   sync.Mutex
	held map[modelKey]heldHistory
}

// heldHistory is the history last read for a key, when, and what its fit made of it.
type heldHistory struct {
	series forecast.Series
	read   time.Time
	fit    fit
}

// newModels returns the models read from source, refitted every refresh; nil without a source.
func newModels(source metrics.HistorySource, clk clock.PassiveClock, refresh time.Duration) (*models, error) {
	if source == nil {
		return nil, nil
	}
	g, err := flight.New[modelKey, fit](clk, flight.Policy{MaxAge: min(historyRetry, refresh), KeepErrors: true, Timeout: fitTimeout})
	if err != nil {
		return nil, fmt.Errorf("build forecast model cache: %w", err)
	}
	slots := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))
	return &models{source: source, clock: clk, refresh: refresh, group: g, fitSlots: slots, held: map[modelKey]heldHistory{}}, nil
}

// get returns the model of p's history, fitting it when it is older than the refresh.
func (m *models) get(ctx context.Context, p historyPlan) (fit, error) {
	if m == nil {
		return fit{}, fmt.Errorf("no history source: %w", errHistoryUnavailable)
	}
	refit := func(ctx context.Context) (fit, error) { return m.refit(ctx, p) }
	if f, ok := m.heldFit(p.key); ok && f.model != nil {
		switch age := m.clock.Now().Sub(f.at); {
		case age < m.refresh:
			return f, nil
		case age < time.Duration(1+maxStaleFits)*m.refresh:
			m.group.Start(ctx, p.key, refit)
			return f, nil
		}
	}
	a, err := m.group.Get(ctx, p.key, refit)
	return a.Value, err
}

// heldFit returns the fit held for key.
func (m *models) heldFit(key modelKey) (fit, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[key]
	return h.fit, ok
}

// refit returns the fit of p's history made less than a refresh ago, or reads the history up to
// now (the part since the history held, when there is one) and fits it. Each value is the load
// around its time: the query is evaluated half a step later.
func (m *models) refit(ctx context.Context, p historyPlan) (fit, error) {
	now := m.clock.Now()
	if f, ok := m.recentFit(p.key, now); ok {
		return f, nil
	}
	end := now.Add(-historyStep / 2).Truncate(historyStep)
	start := end.Add(-p.key.window)
	s := m.heldFrom(p.key, start, end)
	from := s.End()
	req := p.req
	req.Start, req.End, req.Step = from.Add(historyStep/2), end.Add(historyStep/2), historyStep
	read := m.source.ObjectsHistory
	switch p.kind {
	case externalHistory:
		read = m.source.ExternalHistory
	case resourceHistory:
		read = m.source.ResourceHistory
	}
	values, err := read(ctx, req)
	if err != nil {
		return fit{}, fmt.Errorf("read the history of %s in namespace %s: %w: %w", p.key.Metric, p.key.Namespace, errHistoryUnavailable, err)
	}
	s.Values = append(s.Values, values...)
	f := fit{at: now}
	select {
	case m.fitSlots <- struct{}{}:
	case <-ctx.Done():
		return fit{}, fmt.Errorf("fit the history of %s in namespace %s: %w", p.key.Metric, p.key.Namespace, ctx.Err())
	}
	f.model, err = forecast.Fit(s, forecast.HoltWinters)
	<-m.fitSlots
	if err != nil {
		f.refused = fmt.Errorf("fit the history of %s: %w", p.key.Metric, err)
	}
	m.keep(p.key, heldHistory{series: s, read: now, fit: f})
	return f, nil
}

// recentFit returns key's fit if it was made less than a refresh before now.
func (m *models) recentFit(key modelKey, now time.Time) (fit, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[key]
	return h.fit, ok && now.Sub(h.fit.at) < m.refresh
}

// heldFrom returns the history held for key from start on, without its last historyOverlap, or
// an empty series at start when none is held that reaches that far.
func (m *models) heldFrom(key modelKey, start, end time.Time) forecast.Series {
	empty := forecast.Series{Start: start, Step: historyStep}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[key]
	if !ok || h.series.Step != historyStep || h.series.Start.After(start) || h.series.End().After(end.Add(historyStep)) {
		return empty
	}
	skip := int(start.Sub(h.series.Start) / historyStep)
	keep := len(h.series.Values) - int(historyOverlap/historyStep)
	if skip >= keep {
		return empty
	}
	values := make([]float64, keep-skip, len(h.series.Values)-skip+int(m.refresh/historyStep))
	copy(values, h.series.Values[skip:keep])
	return forecast.Series{Start: start, Step: historyStep, Values: values}
}

// keep holds h as key's history, and drops the histories no refit read for three refreshes.
func (m *models) keep(key modelKey, h heldHistory) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held[key] = h
	for k, old := range m.held {
		if h.read.Sub(old.read) > 3*m.refresh {
			delete(m.held, k)
		}
	}
}
