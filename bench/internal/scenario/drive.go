package scenario

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// request builds one request of a closed-loop load.
type request func(ctx context.Context) (*http.Request, error)

// driveResult is what a closed-loop load measured.
type driveResult struct {
	// LatenciesMS are the successful requests' latencies in milliseconds.
	LatenciesMS []float64
	Errors      int
	FirstError  string
	Elapsed     time.Duration
}

// drive sends requests from concurrency workers back to back for d and
// returns the latencies; each worker stops at d (the loop is bounded in time).
func drive(ctx context.Context, hc *http.Client, newReq request, concurrency int, d time.Duration) driveResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var res driveResult
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []float64
			var errs int
			var first string
			for ctx.Err() == nil {
				ms, err := once(ctx, hc, newReq)
				switch {
				case ctx.Err() != nil: // cut off by the deadline: not counted
				case err != nil:
					errs++
					if first == "" {
						first = err.Error()
					}
				default:
					lat = append(lat, ms)
				}
			}
			mu.Lock()
			res.LatenciesMS = append(res.LatenciesMS, lat...)
			res.Errors += errs
			if res.FirstError == "" {
				res.FirstError = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// once sends one request and returns its latency in milliseconds.
func once(ctx context.Context, hc *http.Client, newReq request) (float64, error) {
	req, err := newReq(ctx)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("request: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return 0, fmt.Errorf("read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return ms, nil
}

// getRequest GETs base+path as JSON.
func getRequest(base, path string) request {
	return func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path, nil)
		if err != nil {
			return nil, fmt.Errorf("build request: %w", err)
		}
		req.Header.Set("Accept", "application/json")
		return req, nil
	}
}

// queryRequest POSTs an instant PromQL query to Prometheus, as podpilot does.
func queryRequest(promURL, query string) request {
	form := url.Values{"query": {query}}.Encode()
	return func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(promURL, "/")+"/api/v1/query", strings.NewReader(form))
		if err != nil {
			return nil, fmt.Errorf("build request: %w", err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req, nil
	}
}
