package prometheus

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// opQueryRange is the range query operation, as named in errors, logs and metrics.
const opQueryRange = "query_range"

// MaxRangePoints is the most points Prometheus returns per series from one range query.
const MaxRangePoints = 11000

// QueryRange implements Client. It is for history, read rarely (the forecast's, once per
// distinct metric per refresh): the answer goes through client_golang's decoder, which holds it
// whole, rather than the streaming one of Query. It sends partial_response=false, as Query
// does, and its answers that are no Prometheus API answer fail as theirs do (see rangeClient).
func (c *client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	var out model.Matrix
	err := c.call(ctx, opQueryRange, query, func(ctx context.Context) (envelope, error) {
		if step <= 0 || end.Before(start) || end.Sub(start)/step >= MaxRangePoints {
			return envelope{}, fmt.Errorf("%w: range %s to %s at %s", ErrBadQuery, formatTime(start), formatTime(end), step)
		}
		v, warnings, _, err := v1.NewAPI(rangeClient{Client: c.transport.api, tenant: c.tenant}).QueryRange(ctx, query, v1.Range{Start: start, End: end, Step: step}, v1.WithTimeout(c.timeout))
		env := envelope{warnings: warnings}
		if err != nil {
			return env, err
		}
		m, ok := v.(model.Matrix)
		if !ok {
			return env, fmt.Errorf("%w: a %s, not a matrix", ErrBadQuery, v.Type())
		}
		out = m
		return env, nil
	})
	return out, err
}

// rangeClient is the api.Client of QueryRange. It adds partial_response=false to every request
// (in the form of a POST, in the URL of a GET), as the instant queries send it: client_golang's
// QueryRange has no option for it, and a history with a store missing is not the history. And an
// answer that is no Prometheus API answer (a proxy's 429, a 5xx) is the *statusError transport.do
// makes of it, so that errors are classified alike for every operation.
type rangeClient struct {
	api.Client
	tenant string
}

// Do implements api.Client.
func (c rangeClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	if err := withPartialResponseOff(req); err != nil {
		return nil, nil, err
	}
	setTenant(req, c.tenant)
	resp, body, err := c.Client.Do(ctx, req)
	if err != nil || isAPIStatus(resp.StatusCode) {
		return resp, body, err
	}
	// client_golang sends a POST again as a GET on 405 and 501: resp goes back with the error.
	return resp, body, &statusError{code: resp.StatusCode, detail: detail(body)}
}

// withPartialResponseOff adds partial_response=false to req's form or URL.
func withPartialResponseOff(req *http.Request) error {
	if req.Method == http.MethodGet || req.Body == nil {
		q := req.URL.Query()
		q.Set(partialResponse, "false")
		req.URL.RawQuery = q.Encode()
		return nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return fmt.Errorf("read the form of %s: %w", req.URL.Path, err)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return fmt.Errorf("parse the form of %s: %w", req.URL.Path, err)
	}
	form.Set(partialResponse, "false")
	enc := form.Encode()
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(enc)), int64(len(enc))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(enc)), nil }
	return nil
}
