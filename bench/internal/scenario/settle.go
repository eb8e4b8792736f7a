package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// waitPrometheusAt waits until Prometheus' latest sample of every bench_load
// series in namespaces matching nsRegex is value, so that autoscalers
// created next do not act on samples from before a reset (a scrape interval
// can hold the previous phase's step).
func (e *Env) waitPrometheusAt(ctx context.Context, nsRegex string, value float64) error {
	q := fmt.Sprintf(`count(%s{namespace=~%q} != %s) or vector(0)`, loadMetric, nsRegex, strconv.FormatFloat(value, 'f', -1, 64))
	timeout := 3*e.Cfg.ScrapeInterval + 30*time.Second
	return framework.PollEvery(ctx, time.Second, timeout, "Prometheus holding "+q, func(ctx context.Context) (bool, string, error) {
		v, err := e.promScalar(ctx, q)
		return err == nil && v == 0, fmt.Sprintf("%v series off", v), err
	})
}

// promScalar runs an instant query whose answer is one sample.
func (e *Env) promScalar(ctx context.Context, query string) (float64, error) {
	body, err := get(ctx, http.DefaultClient, e.Cluster.PrometheusURL+"/api/v1/query?query="+url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	var r struct {
		Data struct {
			Result []struct {
				Value [2]json.RawMessage `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("decode query answer: %w", err)
	}
	if len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1", query, len(r.Data.Result))
	}
	var s string
	if err := json.Unmarshal(r.Data.Result[0].Value[1], &s); err != nil {
		return 0, fmt.Errorf("decode sample: %w", err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("parse sample %q: %w", s, err)
	}
	return v, nil
}
