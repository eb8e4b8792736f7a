package forward

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// ListAllExternalMetrics implements provider.ExternalMetricsProvider: podpilot's own metrics,
// then those of the other adapter's last fetched list that podpilot does not serve.
func (p *Provider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	own := p.local.ListAllExternalMetrics()
	remote := p.remote.Load()
	if remote == nil || len(*remote) == 0 {
		return own
	}
	seen := sets.New[string]()
	out := make([]provider.ExternalMetricInfo, 0, len(own)+len(*remote))
	for _, info := range own {
		seen.Insert(info.Metric)
		out = append(out, info)
	}
	for _, info := range *remote {
		if !seen.Has(info.Metric) {
			out = append(out, info)
		}
	}
	return out
}

// Run fetches the other adapter's metric list at once and then every ListInterval until ctx is
// done, and returns nil then. A failed fetch keeps the last list; podpilot's own list is never
// affected.
func (p *Provider) Run(ctx context.Context) error {
	p.refreshList(ctx)
	t := p.clock.NewTicker(ListInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			p.refreshList(ctx)
		}
	}
}

// refreshList fetches the other adapter's metric list within the forward timeout.
func (p *Provider) refreshList(ctx context.Context) {
	logger := klog.FromContext(ctx)
	list, err := p.fetchList(ctx)
	if err != nil {
		p.errors.WithLabelValues(opList).Inc()
		logger.Error(err, "Fetching the other external metrics adapter's metric list failed; keeping the last one", "target", p.target.name)
		return
	}
	p.remote.Store(&list)
	logger.V(4).Info("Fetched the other external metrics adapter's metric list", "target", p.target.name, "metrics", len(list))
}

// fetchList reads the other adapter's APIResourceList: its metric names.
func (p *Provider) fetchList(ctx context.Context) ([]provider.ExternalMetricInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	a, err := p.target.get(ctx, apiPath, nil)
	if err != nil {
		return nil, err
	}
	if a.code != http.StatusOK {
		return nil, fmt.Errorf("list of %s: %w", p.target.name, statusError(a))
	}
	var rl metav1.APIResourceList
	if err := json.Unmarshal(a.body, &rl); err != nil {
		return nil, fmt.Errorf("list of %s: %w: %w", p.target.name, errBadAnswer, err)
	}
	out := make([]provider.ExternalMetricInfo, 0, len(rl.APIResources))
	for _, r := range rl.APIResources {
		out = append(out, provider.ExternalMetricInfo{Metric: r.Name})
	}
	return out, nil
}
