package app

import (
	"context"

	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
)

// historyReads is what podpilot's provider serves of the metrics' history (query_range).
type historyReads interface {
	ObjectsHistory(ctx context.Context, req metricsapi.HistoryRequest) ([]float64, error)
	ExternalHistory(ctx context.Context, req metricsapi.HistoryRequest) ([]float64, error)
	ResourceHistory(ctx context.Context, req metricsapi.HistoryRequest) ([]float64, error)
}

// providerHistory is the autoscaler's HistorySource over podpilot's provider, which must not
// know the autoscaler's types: both requests have the same fields, so one converts to the other.
type providerHistory struct{ reads historyReads }

var _ metrics.HistorySource = providerHistory{}

// ObjectsHistory implements metrics.HistorySource.
func (h providerHistory) ObjectsHistory(ctx context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.reads.ObjectsHistory(ctx, metricsapi.HistoryRequest(req))
}

// ExternalHistory implements metrics.HistorySource.
func (h providerHistory) ExternalHistory(ctx context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.reads.ExternalHistory(ctx, metricsapi.HistoryRequest(req))
}

// ResourceHistory implements metrics.HistorySource.
func (h providerHistory) ResourceHistory(ctx context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.reads.ResourceHistory(ctx, metricsapi.HistoryRequest(req))
}
