package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// ErrNoResourceRules means the history of a resource metric was asked for while the rules in
// force have no resourceRules: podpilot reads that history from Prometheus through them, as it
// serves metrics.k8s.io, and has no other way to.
var ErrNoResourceRules = errors.New("the history of resource metrics (cpu, memory) needs podpilot's resourceRules, " +
	"the rules that serve metrics.k8s.io, and the rule file in force has none")

// errUnknownResource means a resource metric's history was asked for a resource other than cpu
// and memory, the two resourceRules serve.
var errUnknownResource = errors.New("resourceRules serve cpu and memory only")

// ResourceHistory returns, at each step of req, the usage of resource req.Metric (cpu in cores,
// memory in bytes: the units of metrics.k8s.io's values) summed over the pods in req.Namespace
// whose names match req.Names (req.Resource must be pods) and over their containers, or only
// container req.Container of each, through the containerQuery of podpilot's resourceRules, the
// names matched in its series selector so that Prometheus reads only the target's pods;
// NaN where none has a value. As metrics.k8s.io counts them, a NaN or negative sample is usage
// 0. The sum is made by Prometheus, from range queries of fewer than prometheus.MaxRangePoints
// steps each. Without resourceRules it fails with ErrNoResourceRules.
func (f FreshReads) ResourceHistory(ctx context.Context, req HistoryRequest) ([]float64, error) {
	what := fmt.Sprintf("history of resource %s for pods matching %q in namespace %q", req.Metric, req.Names, req.Namespace)
	if req.Container != "" {
		what = fmt.Sprintf("history of resource %s of container %s for pods matching %q in namespace %q", req.Metric, req.Container, req.Names, req.Namespace)
	}
	q, keep, err := resourceHistoryQuery(f.p.ResourceQueries(), req)
	if err != nil {
		if errors.Is(err, ErrNoResourceRules) {
			return nil, fmt.Errorf("%s: %w", what, err) // kept as it is, for errors.Is
		}
		return nil, statusError(what, err)
	}
	return f.p.history(ctx, f.p.ResourceClient(), what, q, req, keep)
}

// resourceHistoryQuery renders ResourceHistory's query for req from the resource rules rq (nil:
// none), and what keeps its one sum.
func resourceHistoryQuery(rq *rules.ResourceQueries, req HistoryRequest) (string, keepSeries, error) {
	if rq == nil {
		return "", nil, ErrNoResourceRules
	}
	var rule *rules.ResourceQuery
	switch corev1.ResourceName(req.Metric) {
	case corev1.ResourceCPU:
		rule = rq.CPU
	case corev1.ResourceMemory:
		rule = rq.Memory
	default:
		return "", nil, fmt.Errorf("resource %q: %w", req.Metric, errUnknownResource)
	}
	pods := schema.GroupResource{Resource: "pods"}
	if req.Resource != pods {
		return "", nil, fmt.Errorf("resource %s of %s: %w", req.Metric, req.Resource.String(), errUnknownResource)
	}
	q, err := rule.ContainerQuery(rules.ObjectRequest{Resource: pods, Namespace: req.Namespace, AllObjects: true, NamesPattern: req.Names})
	if err != nil {
		return "", nil, err
	}
	label, err := rule.LabelForResource(pods)
	if err != nil {
		return "", nil, err
	}
	// A NaN or negative sample (an empty rate window, a counter reset) drops out of the sum:
	// usage 0, as metrics.k8s.io serves it.
	q = fmt.Sprintf("(%s) >= 0", q)
	matches := []historyMatch{{label: label, pattern: req.Names}}
	if req.Container != "" {
		matches = append(matches, historyMatch{label: rule.ContainerLabel(), pattern: regexp.QuoteMeta(req.Container)})
	}
	q, keep := historySum(q, matches...)
	return q, keep, nil
}
