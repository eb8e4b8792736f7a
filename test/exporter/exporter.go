package exporter

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// Exporter holds the series it serves. It is safe for concurrent use.
type Exporter struct {
	clock clock.PassiveClock

	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	name   string
	labels map[string]string
	gauge  bool
	// value is the gauge's value, or the counter's value at since.
	value float64
	// rate is the counter's increase per second from since on.
	rate  float64
	since time.Time
}

// New returns an empty Exporter that reads time from clk.
func New(clk clock.PassiveClock) *Exporter {
	return &Exporter{clock: clk, series: map[string]*series{}}
}

func key(name string, labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s\x00%s", k, labels[k])
	}
	return b.String()
}

// SetGauge sets gauge name{labels} to v.
func (e *Exporter) SetGauge(name string, labels map[string]string, v float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.series[key(name, labels)] = &series{name: name, labels: maps.Clone(labels), gauge: true, value: v}
}

// SetRate makes counter name{labels} grow by perSecond every second from now
// on, so that PromQL's rate() over it reads perSecond once its window is full.
func (e *Exporter) SetRate(name string, labels map[string]string, perSecond float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	k := key(name, labels)
	s, ok := e.series[k]
	if !ok || s.gauge {
		s = &series{name: name, labels: maps.Clone(labels), since: now}
		e.series[k] = s
	}
	s.value = s.current(now)
	s.rate, s.since = perSecond, now
}

// Delete stops serving name{labels}.
func (e *Exporter) Delete(name string, labels map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.series, key(name, labels))
}

func (s *series) current(now time.Time) float64 {
	if s.gauge {
		return s.value
	}
	return s.value + s.rate*now.Sub(s.since).Seconds()
}

// Describe implements prometheus.Collector; the exporter's series are unchecked.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	keys := slices.Collect(maps.Keys(e.series))
	sort.Strings(keys)
	for _, k := range keys {
		s := e.series[k]
		names := slices.Sorted(maps.Keys(s.labels))
		values := make([]string, len(names))
		for i, n := range names {
			values[i] = s.labels[n]
		}
		kind := prometheus.CounterValue
		if s.gauge {
			kind = prometheus.GaugeValue
		}
		desc := prometheus.NewDesc(s.name, "Set by the podpilot test exporter.", names, nil)
		m, err := prometheus.NewConstMetric(desc, kind, s.current(now), values...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
}

// Handler returns the /metrics handler.
func (e *Exporter) Handler() http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Server is an Exporter listening on a loopback port.
type Server struct {
	*Exporter
	// Addr is the host:port it listens on.
	Addr string
	srv  *http.Server
}

// Serve starts an Exporter on a free loopback port.
func Serve(clk clock.PassiveClock) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	e := New(clk)
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	s := &Server{Exporter: e, Addr: l.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("exporter: serve: %v", err))
		}
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// RegisterTarget writes a Prometheus file_sd target file named name.json into
// dir (hack/local-up.sh's $PROMETHEUS_TARGETS_DIR), so that Prometheus
// scrapes this server.
func (s *Server) RegisterTarget(dir, name string) error {
	b, err := json.Marshal([]map[string]any{{"targets": []string{s.Addr}, "labels": map[string]string{"exporter": name}}})
	if err != nil {
		return fmt.Errorf("marshal target: %w", err)
	}
	tmp := filepath.Join(dir, "."+name+".json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write target: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".json")); err != nil {
		return fmt.Errorf("write target: %w", err)
	}
	return nil
}
