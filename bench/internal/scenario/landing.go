package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// firstLanding returns when the first raw sample of w's load at or above perPod landed in
// Prometheus after since: the scrape timestamp of that sample, read back from a range selector
// (raw samples keep their scrape times). It is when the data of a step became visible to any
// reader; the time from it to the Deployment's resize is the autoscaler's own part.
func (e *Env) firstLanding(ctx context.Context, w workload, since time.Time, perPod float64) (time.Time, error) {
	q := fmt.Sprintf(`%s{namespace=%q,pod=~%q}[5m]`, loadMetric, w.ns, w.name+"-.*")
	body, err := get(ctx, http.DefaultClient, e.Cluster.PrometheusURL+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return time.Time{}, err
	}
	var r struct {
		Data struct {
			Result []struct {
				Values [][2]json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return time.Time{}, fmt.Errorf("decode range answer: %w", err)
	}
	var first time.Time
	for _, series := range r.Data.Result {
		for _, v := range series.Values {
			var ts float64
			var s string
			if json.Unmarshal(v[0], &ts) != nil || json.Unmarshal(v[1], &s) != nil {
				continue
			}
			val, err := strconv.ParseFloat(s, 64)
			at := time.UnixMilli(int64(ts * 1000))
			if err != nil || val < perPod || at.Before(since) {
				continue
			}
			if first.IsZero() || at.Before(first) {
				first = at
			}
			break // samples are in time order: the first match is the series' landing
		}
	}
	if first.IsZero() {
		return time.Time{}, fmt.Errorf("no sample of %s at %g per pod after %s", q, perPod, since.Format(time.RFC3339))
	}
	return first, nil
}
