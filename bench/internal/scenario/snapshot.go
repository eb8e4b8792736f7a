package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/podpilot/podpilot/bench/internal/promtext"
)

// snapshot is the counters of every component at one moment; the bench
// reports the differences between two.
type snapshot struct {
	at                                time.Time
	podpilot, apiserver, kcm, prom    promtext.Families
	podpilotCPU, kcmCPU, apiserverCPU time.Duration
}

func (e *Env) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{at: time.Now(), podpilotCPU: e.PodpilotCPU(), kcmCPU: e.CPU("kube-controller-manager"), apiserverCPU: e.CPU("kube-apiserver")}
	var err error
	for _, c := range []struct {
		name string
		into *promtext.Families
	}{{"podpilot", &s.podpilot}, {"apiserver", &s.apiserver}, {"kcm", &s.kcm}, {"prometheus", &s.prom}} {
		if *c.into, err = e.Metrics(ctx, c.name); err != nil {
			return s, err
		}
	}
	return s, nil
}

// podpilotQueries are the PromQL queries podpilot has sent.
func (s snapshot) podpilotQueries() float64 {
	return s.podpilot.Sum("podpilot_prometheus_client_request_duration_seconds", map[string]string{"operation": "query"})
}

// promQueries are the instant and range queries Prometheus has evaluated.
func (s snapshot) promQueries() float64 {
	return s.prom.Sum("prometheus_engine_query_duration_seconds", map[string]string{"slice": "inner_eval"})
}

// writeVerbs are the apiserver_request_total verbs that change objects.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true}

// autoscalerResources are the resources the autoscalers write (of
// Deployments, only the scale subresource counts; events include the
// Deployment controller's ScalingReplicaSet).
var autoscalerResources = map[string]bool{"horizontalpodautoscalers": true, "podautoscalers": true, "deployments": true, "events": true}

// writes returns the API server's write requests since before, by
// resource[/subresource], for the resources the autoscalers write.
func (s snapshot) writes(before snapshot) map[string]float64 {
	now := s.apiserver.SumBy("apiserver_request_total", nil, "verb", "resource", "subresource")
	then := before.apiserver.SumBy("apiserver_request_total", nil, "verb", "resource", "subresource")
	out := map[string]float64{}
	for k, v := range now {
		parts := strings.SplitN(k, "/", 3)
		if len(parts) != 3 || !writeVerbs[parts[0]] || !autoscalerResources[parts[1]] {
			continue
		}
		if parts[1] == "deployments" && parts[2] != "scale" { // the Deployment controller's, not the autoscaler's
			continue
		}
		key := parts[1]
		if parts[2] != "" {
			key += "/" + parts[2]
		}
		if d := v - then[k]; d > 0 {
			out[key] += d
		}
	}
	return out
}

// histogramMean returns the mean of histogram name's observations since
// before, and how many there were.
func histogramMean(now, before promtext.Families, name string) (mean, count float64) {
	s1, c1 := now.HistogramSum(name, nil)
	s0, c0 := before.HistogramSum(name, nil)
	if c1-c0 <= 0 {
		return 0, 0
	}
	return (s1 - s0) / (c1 - c0), c1 - c0
}

// autoscalerHistograms describes podpilot's autoscaler duration histograms
// (whatever their names: newer podpilots add round timings) since before.
func (s snapshot) autoscalerHistograms(before snapshot) []string {
	names := s.podpilot.Names("podpilot_autoscaler", "_seconds")
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if mean, count := histogramMean(s.podpilot, before.podpilot, n); count > 0 {
			out = append(out, fmt.Sprintf("`%s`: %.0f observations, mean %.3f s", n, count, mean))
		}
	}
	return out
}

func sumValues(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// formatWrites prints writes per round by resource, largest first.
func formatWrites(m map[string]float64, rounds float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]/rounds))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
