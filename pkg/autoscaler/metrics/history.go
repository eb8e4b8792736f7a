package metrics

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// HistoryRequest asks for a metric's past values, for the forecast. Its fields are those of
// podpilot's provider's request of the same name, so that cmd/adapter converts one to the other.
type HistoryRequest struct {
	// Namespace is the namespace of the objects, or of the request for an external metric.
	Namespace string
	// Metric is the metric's name.
	Metric string
	// Resource is the group-resource of the objects (pods for a per-pod metric); unused for an
	// external metric.
	Resource schema.GroupResource
	// Names is an RE2 expression the objects' names must match in whole: their values are
	// summed. Unused for an external metric, whose series are summed.
	Names string
	// Selector narrows the metric's series; nil selects everything. Unused for a resource
	// metric.
	Selector labels.Selector
	// Container, for a resource metric, keeps only the usage of this container of each pod;
	// empty sums the pods' containers. Unused for other metrics.
	Container string
	// Start, End and Step say when the values are: at Start, Start+Step, ... up to End.
	Start, End time.Time
	Step       time.Duration
}

// HistorySource serves metrics' past values, e.g. podpilot's Prometheus provider through
// query_range. Each method returns one value per step of the request, NaN where there is none.
type HistorySource interface {
	// ObjectsHistory returns the sum of custom metric req.Metric over the objects of
	// req.Resource whose names match req.Names.
	ObjectsHistory(ctx context.Context, req HistoryRequest) ([]float64, error)
	// ExternalHistory returns the sum of external metric req.Metric's series.
	ExternalHistory(ctx context.Context, req HistoryRequest) ([]float64, error)
	// ResourceHistory returns the usage of resource req.Metric (cpu in cores, memory in bytes,
	// as metrics.k8s.io serves them) summed over the pods whose names match req.Names, of
	// container req.Container only when it is set.
	ResourceHistory(ctx context.Context, req HistoryRequest) ([]float64, error)
}
