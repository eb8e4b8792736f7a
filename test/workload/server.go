package main

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// maxBatch bounds the queries one request may carry.
const maxBatch = 1000

// queriesName is the counter podpilot's default rules serve as zdns_vanguard_qps.
const queriesName = "zdns_vanguard_queries_total"

// server answers queries and exports what it did.
type server struct {
	clock  clock.PassiveClock
	logger klog.Logger
	work   hashWork
	held   *heldMemory

	ready atomic.Bool
	// stopping fails /readyz from SIGTERM on, while queries are still
	// answered: until the endpoints drop the pod, the Service still sends some.
	stopping atomic.Bool
	seq      atomic.Uint64
	queries  prometheus.Counter
	reg      *prometheus.Registry
}

func newServer(clk clock.PassiveClock, logger klog.Logger, work hashWork, held *heldMemory) *server {
	s := &server{clock: clk, logger: logger, work: work, held: held, reg: prometheus.NewRegistry()}
	s.queries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: queriesName,
		Help: "Queries answered (a request to /query carries n of them).",
	})
	s.reg.MustRegister(
		s.queries,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "zdns_vanguard_held_bytes",
			Help: "Memory held for the queries of the last --memory-window.",
		}, func() float64 { return float64(held.held()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "zdns_vanguard_hash_bytes_per_query",
			Help: "Bytes each query hashes, as calibrated at start-up from --cpu-per-query.",
		}, func() float64 { return float64(work.bytes) }),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
	)
	return s
}

// handler routes /query, /metrics, /readyz and /livez.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /query", s.query)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() || s.stopping.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// query answers GET /query?n=N: N queries (1 if n is absent), each hashing
// and holding its memory, then the last digest in hex. Before the server is
// ready it answers 503; once it is stopping it still answers.
func (s *server) query(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	n := 1
	if v := r.URL.Query().Get("n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxBatch {
			http.Error(w, "n must be a whole number from 1 to "+strconv.Itoa(maxBatch), http.StatusBadRequest)
			return
		}
	}
	var sum [32]byte
	for range n {
		slot, err := s.held.take(s.clock.Now())
		if err != nil {
			s.logger.Error(err, "Could not give back held memory")
		}
		sum = s.work.do(s.seq.Add(1), slot)
	}
	s.queries.Add(float64(n))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(hex.EncodeToString(sum[:]) + "\n"))
}
