package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Config says where the queries go and what bounds a run.
type Config struct {
	// Target is the workload's query URL, e.g. http://10.0.0.17/query. Its
	// host must be a loopback or private IP address: the generator is for a
	// workload on this machine or inside a local cluster, nothing else.
	Target string
	// Batch is how many queries each request carries (?n=Batch): the
	// workload's cpu goes into its queries, not into HTTP.
	Batch int
	// MaxInFlight bounds the requests waiting for an answer; a request that
	// comes due while that many wait is skipped and counted, never queued.
	MaxInFlight int
	// Timeout bounds each request.
	Timeout time.Duration
	// MaxRequests and MaxDuration bound a run, whatever its profile says.
	MaxRequests int64
	MaxDuration time.Duration
	// Reconnect is how often idle connections are closed, so that a
	// Service's new pods get traffic (kube-proxy picks a pod per connection).
	Reconnect time.Duration
}

// DefaultConfig returns the defaults for target: batches of 50, 64 in
// flight, 5s per request, at most 10 million requests and 15 minutes,
// closing idle connections every 100ms.
func DefaultConfig(target string) Config {
	return Config{Target: target, Batch: 50, MaxInFlight: 64, Timeout: 5 * time.Second,
		MaxRequests: 10_000_000, MaxDuration: 15 * time.Minute, Reconnect: 100 * time.Millisecond}
}

func (c Config) validate() error {
	var errs []error
	if c.Batch < 1 || c.Batch > 1000 {
		errs = append(errs, fmt.Errorf("batch must be from 1 to 1000, got %d", c.Batch))
	}
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("max in flight must be at least 1, got %d", c.MaxInFlight))
	}
	if c.Timeout <= 0 || c.MaxDuration <= 0 || c.Reconnect <= 0 {
		errs = append(errs, fmt.Errorf("timeout (%s), max duration (%s) and reconnect (%s) must be positive", c.Timeout, c.MaxDuration, c.Reconnect))
	}
	if c.MaxRequests < 1 {
		errs = append(errs, fmt.Errorf("max requests must be at least 1, got %d", c.MaxRequests))
	}
	return errors.Join(errs...)
}

// Counts are what a run (or one second of it) did, in requests.
type Counts struct {
	// Due is how many requests the profile asked for.
	Due int64
	// Sent is how many were sent; Skipped how many were not, because
	// MaxInFlight requests were waiting.
	Sent, Skipped int64
	// Answered got a 2xx; Failed another status or no answer.
	Answered, Failed int64
}

func (c Counts) minus(o Counts) Counts {
	return Counts{Due: c.Due - o.Due, Sent: c.Sent - o.Sent, Skipped: c.Skipped - o.Skipped,
		Answered: c.Answered - o.Answered, Failed: c.Failed - o.Failed}
}

// Second is what one second of a run did.
type Second struct {
	// At is the end of the second, since the run began.
	At time.Duration
	// Offered is the queries per second the profile offered in this second
	// (or in the stretch since the last report, for the last one).
	Offered float64
	Counts
}

// Generator sends requests at a profile's rate.
type Generator struct {
	cfg    Config
	url    string
	clock  clock.WithTicker
	client *http.Client
	tr     *http.Transport

	due, sent, skipped, answered, failed atomic.Int64
	// lastFailure describes the last failed request.
	lastFailure atomic.Pointer[string]
}

// New returns a Generator for cfg, or an error wrapping ErrTarget if
// cfg.Target is not a loopback or private address.
func New(cfg Config, clk clock.WithTicker) (*Generator, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("load generator config: %w", err)
	}
	u, err := requestURL(cfg.Target, cfg.Batch)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               nil, // never through a proxy from the environment: only to the target
		DialContext:         (&net.Dialer{Timeout: cfg.Timeout}).DialContext,
		MaxIdleConnsPerHost: cfg.MaxInFlight,
		MaxConnsPerHost:     cfg.MaxInFlight,
		DisableCompression:  true,
	}
	client := &http.Client{Transport: tr, Timeout: cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Generator{cfg: cfg, url: u, clock: clk, client: client, tr: tr}, nil
}

// Counts returns what the generator did so far, for a caller that watches a
// run from another goroutine.
func (g *Generator) Counts() Counts {
	return Counts{Due: g.due.Load(), Sent: g.sent.Load(), Skipped: g.skipped.Load(),
		Answered: g.answered.Load(), Failed: g.failed.Load()}
}

// LastFailure describes the last request that failed ("" if none did):
// the error, or the status it was answered with.
func (g *Generator) LastFailure() string {
	if p := g.lastFailure.Load(); p != nil {
		return *p
	}
	return ""
}

// fail counts a failed request and keeps what went wrong.
func (g *Generator) fail(what string) {
	g.lastFailure.Store(&what)
	g.failed.Add(1)
}

// tickEvery is how often the generator sends what has come due.
const tickEvery = 10 * time.Millisecond

// Run sends requests at p's rate until p ends, MaxDuration passes,
// MaxRequests are due or ctx is done, then waits for the answers. It calls
// report (if not nil) after each second and once at the end, from its own
// goroutine. It returns what the run did; ctx's error if ctx ended it.
func (g *Generator) Run(ctx context.Context, p Profile, report func(Second)) (Counts, error) {
	if err := p.Validate(); err != nil {
		return Counts{}, err
	}
	end := min(p.Duration(), g.cfg.MaxDuration)
	before := g.Counts()
	slots := make(chan struct{}, g.cfg.MaxInFlight)
	var wg sync.WaitGroup
	defer g.tr.CloseIdleConnections()
	tick, reconnect := g.clock.NewTicker(tickEvery), g.clock.NewTicker(g.cfg.Reconnect)
	defer tick.Stop()
	defer reconnect.Stop()
	start, last, nextReport := g.clock.Now(), before, time.Second
	var err error
	for err == nil {
		elapsed := min(g.clock.Since(start), end)
		g.issue(ctx, int64(p.Queries(elapsed)/float64(g.cfg.Batch)), slots, &wg)
		for ; elapsed >= nextReport && report != nil; nextReport += time.Second {
			now := g.Counts()
			report(Second{At: nextReport, Offered: offered(p, nextReport-time.Second, nextReport), Counts: now.minus(last)})
			last = now
		}
		if elapsed == end || g.due.Load() >= g.cfg.MaxRequests {
			break
		}
		select {
		case <-ctx.Done():
			err = fmt.Errorf("load generator to %s stopped: %w", g.cfg.Target, ctx.Err())
		case <-tick.C():
		case <-reconnect.C():
			g.tr.CloseIdleConnections()
		}
	}
	wg.Wait()
	if now := g.Counts(); report != nil && now != last {
		at := min(g.clock.Since(start), end)
		report(Second{At: at, Offered: offered(p, nextReport-time.Second, at), Counts: now.minus(last)})
	}
	return g.Counts().minus(before), err
}

// offered is the mean rate p offers from from to to (0 if they are equal).
func offered(p Profile, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	return (p.Queries(to) - p.Queries(from)) / (to - from).Seconds()
}

// issue sends requests until want have come due (or MaxRequests), skipping
// each that finds MaxInFlight requests waiting.
func (g *Generator) issue(ctx context.Context, want int64, slots chan struct{}, wg *sync.WaitGroup) {
	want = min(want, g.cfg.MaxRequests)
	for g.due.Load() < want {
		g.due.Add(1)
		select {
		case slots <- struct{}{}:
			g.sent.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				g.send(ctx)
			}()
		default:
			g.skipped.Add(1)
		}
	}
}

// send sends one request and counts its outcome.
func (g *Generator) send(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url, nil)
	if err != nil {
		g.fail(err.Error())
		return
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.fail(err.Error())
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // read to the end so the connection is reused
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		g.answered.Add(1)
		return
	}
	g.fail("answered " + resp.Status)
}
