package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
)

// queryServer counts the queries (?n=) it answers with status.
type queryServer struct {
	status  int
	queries atomic.Int64
	// wait, if not nil, holds every request until it is closed.
	wait chan struct{}
}

func (s *queryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.wait != nil {
		<-s.wait
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	s.queries.Add(int64(n))
	w.WriteHeader(s.status)
}

func newGenerator(t *testing.T, url string, change func(*Config)) *Generator {
	t.Helper()
	cfg := DefaultConfig(url + "/query")
	change(&cfg)
	g, err := New(cfg, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// second is a profile of one second at qps.
func second(qps float64) Profile {
	return Profile{{Name: "hold", Duration: time.Second, From: qps, To: qps}}
}

func TestRunSendsWhatIsDueAndReportsEverySecond(t *testing.T) {
	qs := &queryServer{status: http.StatusOK}
	srv := httptest.NewServer(qs)
	defer srv.Close()
	g := newGenerator(t, srv.URL, func(c *Config) { c.Batch = 10 })
	p := Profile{
		{Name: "ramp", Duration: time.Second, From: 0, To: 1000},
		{Name: "hold", Duration: time.Second, From: 1000, To: 1000},
	}
	var mu sync.Mutex
	var sum Counts
	var seconds int
	total, err := g.Run(t.Context(), p, func(s Second) {
		mu.Lock()
		defer mu.Unlock()
		seconds++
		sum = Counts{Due: sum.Due + s.Due, Sent: sum.Sent + s.Sent, Skipped: sum.Skipped + s.Skipped,
			Answered: sum.Answered + s.Answered, Failed: sum.Failed + s.Failed}
	})
	if err != nil {
		t.Fatal(err)
	}
	// ½·1s·1000 + 1s·1000 = 1500 queries in batches of 10.
	want := Counts{Due: 150, Sent: 150, Answered: 150}
	if diff := cmp.Diff(want, total); diff != "" {
		t.Errorf("Run() counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(total, sum); diff != "" {
		t.Errorf("the reported seconds do not add up to the total (-total +sum):\n%s", diff)
	}
	if seconds < 2 {
		t.Errorf("got %d reports, want one per second of the 2s profile", seconds)
	}
	if got := qs.queries.Load(); got != 1500 {
		t.Errorf("the server answered %d queries, want 1500", got)
	}
}

func TestRunBounds(t *testing.T) {
	tests := []struct {
		name   string
		status int
		change func(*Config)
		p      Profile
		want   Counts
		// wantFailure is what LastFailure says.
		wantFailure string
	}{
		{
			name:   "MaxRequests ends a run before its profile does",
			status: http.StatusOK,
			change: func(c *Config) { c.Batch, c.MaxRequests = 1, 20 },
			p:      Profile{{Name: "hold", Duration: time.Hour, From: 1000, To: 1000}},
			want:   Counts{Due: 20, Sent: 20, Answered: 20},
		},
		{
			name:   "MaxDuration ends a run before its profile does",
			status: http.StatusOK,
			change: func(c *Config) { c.Batch, c.MaxDuration = 1, 100*time.Millisecond },
			p:      Profile{{Name: "hold", Duration: time.Hour, From: 100, To: 100}},
			want:   Counts{Due: 10, Sent: 10, Answered: 10},
		},
		{
			name:        "an answer other than 2xx counts as failed, and the last failure says which",
			status:      http.StatusServiceUnavailable,
			change:      func(c *Config) { c.Batch = 10 },
			p:           second(100),
			want:        Counts{Due: 10, Sent: 10, Failed: 10},
			wantFailure: "answered 503 Service Unavailable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&queryServer{status: tt.status})
			defer srv.Close()
			g := newGenerator(t, srv.URL, tt.change)
			got, err := g.Run(t.Context(), tt.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run() counts (-want +got):\n%s", diff)
			}
			if want := tt.wantFailure; g.LastFailure() != want {
				t.Errorf("LastFailure() = %q, want %q", g.LastFailure(), want)
			}
		})
	}
}

func TestRunSkipsWhatFindsMaxInFlightWaiting(t *testing.T) {
	qs := &queryServer{status: http.StatusOK, wait: make(chan struct{})}
	srv := httptest.NewServer(qs)
	defer srv.Close()
	g := newGenerator(t, srv.URL, func(c *Config) { c.Batch, c.MaxInFlight = 1, 2 })
	go func() {
		// Hold both requests in flight until all 50 have come due.
		for g.Counts().Due < 50 {
			time.Sleep(10 * time.Millisecond)
		}
		close(qs.wait)
	}()
	got, err := g.Run(t.Context(), Profile{{Name: "hold", Duration: 500 * time.Millisecond, From: 100, To: 100}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Counts{Due: 50, Sent: 2, Skipped: 48, Answered: 2}, got); diff != "" {
		t.Errorf("Run() counts (-want +got):\n%s", diff)
	}
}

func TestRunStopsWithItsContext(t *testing.T) {
	srv := httptest.NewServer(&queryServer{status: http.StatusOK})
	defer srv.Close()
	g := newGenerator(t, srv.URL, func(*Config) {})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := g.Run(ctx, Profile{{Name: "hold", Duration: time.Hour, From: 10, To: 10}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run() with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		target bool
	}{
		{name: "a target outside loopback and private addresses", change: func(c *Config) { c.Target = "http://192.0.2.1/query" }, target: true},
		{name: "a batch of 0", change: func(c *Config) { c.Batch = 0 }},
		{name: "no request in flight", change: func(c *Config) { c.MaxInFlight = 0 }},
		{name: "no time to run", change: func(c *Config) { c.MaxDuration = 0 }},
		{name: "no request to send", change: func(c *Config) { c.MaxRequests = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig("http://127.0.0.1:8080/query")
			tt.change(&cfg)
			_, err := New(cfg, clock.RealClock{})
			if err == nil || errors.Is(err, ErrTarget) != tt.target {
				t.Errorf("New() error = %v, want an error (ErrTarget: %v)", err, tt.target)
			}
		})
	}
}
