package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Client is what podpilot needs from Prometheus. Answers are decoded as they stream in,
// keeping only what each method returns.
type Client interface {
	// Query evaluates an instant query at the given time; a zero time means
	// Prometheus's now. A scalar result comes back as a one-sample vector
	// without labels; any other non-vector result is an ErrBadQuery.
	Query(ctx context.Context, query string, at time.Time) (model.Vector, error)
	// QueryLabels is Query for callers that need only some labels of each sample: every
	// Sample holds the values of labels, in that order, and nothing else.
	QueryLabels(ctx context.Context, query string, at time.Time, labels []string) ([]Sample, error)
	// Series returns one label set per distinct series shape (metric name and set of label
	// names) among the series that match any of the matchers between start and end, with the
	// label values of the first such series; zero times leave that bound open. What it holds
	// grows with the distinct shapes, not with the series.
	Series(ctx context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error)
	// QueryRange evaluates a range query from start to end at step, fewer than MaxRangePoints
	// steps; any result other than a matrix is an ErrBadQuery.
	QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) (model.Matrix, error)
}

// Config is everything New needs; build it with Options.Config (the default backend) or
// Config.ForEndpoint (a rule file's backend).
type Config struct {
	// Backend names the backend in errors and in the backend label of Metrics; empty is the
	// backend of --prometheus-url, "default" in metrics and unnamed in errors.
	Backend string
	// Address is the base URL of the Prometheus HTTP API, path prefix included.
	Address string
	// Timeout bounds every call, as a context deadline; it is also sent to
	// Prometheus as the query evaluation timeout.
	Timeout time.Duration
	// Method is GET or POST.
	Method string
	// HTTP holds TLS, authentication and extra headers.
	HTTP commoncfg.HTTPClientConfig
	// WarningsAsErrors makes an answer that carries warnings (one that may be partial) a
	// failed call, wrapping ErrPartialAnswer.
	WarningsAsErrors bool
	// Clock times calls for Metrics.
	Clock clock.PassiveClock
}

// Operations, as named in errors, logs and metrics.
const (
	opQuery  = "query"
	opSeries = "series"
)

// partialResponse is the parameter that asks Thanos Querier (where partial responses are on by
// default) to fail a call that some store could not answer, instead of answering without that
// store's series and a warning. Prometheus and most other backends ignore it.
const partialResponse = "partial_response"

type client struct {
	backend          string
	tenant           string
	transport        *transport
	timeout          time.Duration
	warningsAsErrors bool
	clock            clock.PassiveClock
	metrics          *Metrics
}

var _ TenantClient = (*client)(nil)

// TenantHeader is the request header that names the tenant, as Mimir, Cortex and a Thanos
// receiver read it.
const TenantHeader = "X-Scope-OrgID"

// TenantClient is a Client whose calls can carry a tenant.
type TenantClient interface {
	Client
	// WithTenant returns a Client whose every call carries the header X-Scope-OrgID: tenant
	// (none when tenant is empty); it shares c's connections.
	WithTenant(tenant string) Client
}

// WithTenant implements TenantClient.
func (c *client) WithTenant(tenant string) Client {
	cp := *c
	cp.tenant = tenant
	return &cp
}

// defaultBackend names a Config without Backend in metrics; its errors name no backend.
const defaultBackend = "default"

// backendLabel is the backend label of c's metrics.
func (c *client) backendLabel() string {
	if c.backend == "" {
		return defaultBackend
	}
	return c.backend
}

// New returns a Client for cfg. m may be nil.
func New(cfg *Config, m *Metrics) (TenantClient, error) {
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
		backend:          cfg.Backend,
		transport:        &transport{api: apiClient, http: httpClient, get: cfg.Method == http.MethodGet},
		timeout:          cfg.Timeout,
		warningsAsErrors: cfg.WarningsAsErrors,
		clock:            clk,
		metrics:          m,
	}, nil
}

// Query implements Client.
func (c *client) Query(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	sink := &vectorSink{}
	if err := c.query(ctx, query, at, sink); err != nil {
		return nil, err
	}
	return sink.vector(), nil
}

// QueryLabels implements Client.
func (c *client) QueryLabels(ctx context.Context, query string, at time.Time, labels []string) ([]Sample, error) {
	sink := newLabelSink(labels)
	if err := c.query(ctx, query, at, sink); err != nil {
		return nil, err
	}
	return sink.out, nil
}

// query runs an instant query, decoding its samples into sink.
func (c *client) query(ctx context.Context, query string, at time.Time, sink sampleSink) error {
	return c.call(ctx, opQuery, query, func(ctx context.Context) (envelope, error) {
		args := url.Values{"query": {query}, "timeout": {c.timeout.String()}, partialResponse: {"false"}}
		if !at.IsZero() {
			args.Set("time", formatTime(at))
		}
		resp, err := c.transport.do(ctx, c.tenant, "/api/v1/query", args)
		if err != nil {
			return envelope{}, err
		}
		q := &queryReader{sink: sink}
		env, err := c.transport.decode(ctx, resp, q.data)
		if err == nil {
			err = q.check()
		}
		return env, err
	})
}

// Series implements Client.
func (c *client) Series(ctx context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error) {
	shapes := &shapeSet{}
	err := c.call(ctx, opSeries, strings.Join(matchers, ", "), func(ctx context.Context) (envelope, error) {
		if len(matchers) == 0 {
			return envelope{}, fmt.Errorf("%w: no series matchers", ErrBadQuery)
		}
		args := url.Values{"match[]": matchers, partialResponse: {"false"}}
		if !start.IsZero() {
			args.Set("start", formatTime(start))
		}
		if !end.IsZero() {
			args.Set("end", formatTime(end))
		}
		resp, err := c.transport.do(ctx, c.tenant, "/api/v1/series", args)
		if err != nil {
			return envelope{}, err
		}
		return c.transport.decode(ctx, resp, shapes.data)
	})
	if err != nil {
		return nil, err
	}
	return shapes.out, nil
}

// formatTime writes t as Unix seconds, as client_golang does.
func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.Unix())+float64(t.Nanosecond())/1e9, 'f', -1, 64)
}

// call runs fn under the timeout, logs what Prometheus noted about the query, makes an answer
// with warnings a failed call if so configured, records metrics and wraps any error with the
// backend, op, subject and a sentinel.
func (c *client) call(ctx context.Context, op, subject string, fn func(context.Context) (envelope, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := c.clock.Now()
	env, err := fn(ctx)
	logAnnotations(ctx, op, subject, env.warnings, env.infos)
	if err == nil && len(env.warnings) > 0 {
		c.metrics.warned(c.backendLabel(), op)
		if c.warningsAsErrors {
			err = partialError(env.warnings)
		}
	}
	outcome, err := classify(op, subject, err)
	c.metrics.observe(c.backendLabel(), op, outcome, c.clock.Since(start))
	if err != nil && c.backend != "" {
		return fmt.Errorf("backend %s: %w", c.backend, err)
	}
	return err
}

// maxWarningsLen bounds how much of an answer's warnings an error repeats.
const maxWarningsLen = 512

// partialError is the error of an answer with warnings: it may lack series.
func partialError(warnings []string) error {
	msg := strings.Join(warnings, "; ")
	if len(msg) > maxWarningsLen {
		msg = strings.ToValidUTF8(msg[:maxWarningsLen], "") + "…"
	}
	return fmt.Errorf("%w: warnings: %s", ErrPartialAnswer, msg)
}

// logAnnotations logs Prometheus warnings at V(2) and infos at V(4).
func logAnnotations(ctx context.Context, op, subject string, warnings, infos []string) {
	if len(warnings) == 0 && len(infos) == 0 {
		return
	}
	logger := klog.FromContext(ctx)
	if len(warnings) > 0 {
		logger.V(2).Info("Prometheus returned warnings", "operation", op, "query", truncate(subject), "warnings", warnings)
	}
	if len(infos) > 0 {
		logger.V(4).Info("Prometheus returned infos", "operation", op, "query", truncate(subject), "infos", infos)
	}
}
