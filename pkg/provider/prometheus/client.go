package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Client is what podpilot needs from Prometheus.
type Client interface {
	// Query evaluates an instant query at the given time; a zero time means
	// Prometheus's now. A scalar result comes back as a one-sample vector
	// without labels; any other non-vector result is an ErrBadQuery.
	Query(ctx context.Context, query string, at time.Time) (model.Vector, error)
	// Series returns the label sets of the series that match any of the
	// matchers between start and end; zero times leave that bound open.
	Series(ctx context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error)
}

// Config is everything New needs; build it with Options.Config.
type Config struct {
	// Address is the base URL of the Prometheus HTTP API, path prefix included.
	Address string
	// Timeout bounds every call, as a context deadline; it is also sent to
	// Prometheus as the query evaluation timeout.
	Timeout time.Duration
	// Method is GET or POST.
	Method string
	// HTTP holds TLS, authentication and extra headers.
	HTTP commoncfg.HTTPClientConfig
	// Clock times calls for Metrics.
	Clock clock.PassiveClock
}

// Operations, as named in errors, logs and metrics.
const (
	opQuery  = "query"
	opSeries = "series"
)

type client struct {
	api     v1.API
	timeout time.Duration
	clock   clock.PassiveClock
	metrics *Metrics
}

var _ Client = (*client)(nil)

// New returns a Client for cfg. m may be nil.
func New(cfg *Config, m *Metrics) (Client, error) {
	if cfg.Timeout <= 0 {
		return nil, fmt.Errorf("prometheus client for %s: timeout must be positive, got %s", cfg.Address, cfg.Timeout)
	}
	if cfg.Method != http.MethodGet && cfg.Method != http.MethodPost {
		return nil, fmt.Errorf("prometheus client for %s: method must be GET or POST, got %q", cfg.Address, cfg.Method)
	}
	httpClient, err := commoncfg.NewClientFromConfig(cfg.HTTP, "prometheus")
	if err != nil {
		return nil, fmt.Errorf("prometheus http client for %s: %w", cfg.Address, err)
	}
	apiClient, err := api.NewClient(api.Config{Address: cfg.Address, Client: httpClient})
	if err != nil {
		return nil, fmt.Errorf("prometheus api client for %s: %w", cfg.Address, err)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &client{
		api:     v1.NewAPI(&statusClient{next: apiClient, get: cfg.Method == http.MethodGet}),
		timeout: cfg.Timeout,
		clock:   clk,
		metrics: m,
	}, nil
}

// Query implements Client.
func (c *client) Query(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	var vec model.Vector
	err := c.call(ctx, opQuery, query, func(ctx context.Context) (v1.Warnings, v1.Infos, error) {
		val, warnings, infos, err := c.api.Query(ctx, query, at, v1.WithTimeout(c.timeout))
		if err == nil {
			vec, err = toVector(val)
		}
		return warnings, infos, err
	})
	return vec, err
}

// Series implements Client.
func (c *client) Series(ctx context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error) {
	var sets []model.LabelSet
	err := c.call(ctx, opSeries, strings.Join(matchers, ", "), func(ctx context.Context) (v1.Warnings, v1.Infos, error) {
		if len(matchers) == 0 {
			return nil, nil, fmt.Errorf("%w: no series matchers", ErrBadQuery)
		}
		var (
			warnings v1.Warnings
			infos    v1.Infos
			err      error
		)
		sets, warnings, infos, err = c.api.Series(ctx, matchers, start, end)
		return warnings, infos, err
	})
	return sets, err
}

// call runs fn under the timeout, logs what Prometheus noted about the
// query, records metrics and wraps any error with op, subject and a sentinel.
func (c *client) call(ctx context.Context, op, subject string, fn func(context.Context) (v1.Warnings, v1.Infos, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := c.clock.Now()
	warnings, infos, err := fn(ctx)
	logAnnotations(ctx, op, subject, warnings, infos)
	outcome, err := classify(op, subject, err)
	c.metrics.observe(op, outcome, c.clock.Since(start))
	return err
}

// logAnnotations logs Prometheus warnings at V(2) and infos at V(4).
func logAnnotations(ctx context.Context, op, subject string, warnings v1.Warnings, infos v1.Infos) {
	if len(warnings) == 0 && len(infos) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	if len(warnings) > 0 {
		logger.V(2).Info("Prometheus returned warnings", "operation", op, "query", truncate(subject), "warnings", []string(warnings))
	}
	if len(infos) > 0 {
		logger.V(4).Info("Prometheus returned infos", "operation", op, "query", truncate(subject), "infos", []string(infos))
	}
}

// toVector accepts vector and scalar results.
func toVector(val model.Value) (model.Vector, error) {
	switch v := val.(type) {
	case model.Vector:
		return v, nil
	case *model.Scalar:
		return model.Vector{{Metric: model.Metric{}, Value: v.Value, Timestamp: v.Timestamp}}, nil
	case nil:
		return nil, errors.New("empty result")
	}
	return nil, fmt.Errorf("%w: result type %s, want vector or scalar", ErrBadQuery, val.Type())
}
