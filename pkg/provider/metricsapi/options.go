package metricsapi

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/informers"
	"k8s.io/component-base/metrics"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// Defaults of Options.
const (
	// DefaultDiscoveryInterval is how often series are rediscovered: what prometheus-adapter's
	// Helm chart sets (its own flag default is 10m).
	DefaultDiscoveryInterval = time.Minute
	// DefaultSeriesMaxAge is how far back discovery looks for series. It is longer than the
	// relist interval so that a series missing from a scrape or two (a restarting pod, a slow
	// target) does not vanish from the API and make autoscalers flap; the cost is that a metric
	// stays listed for up to this long after its last sample (its queries then return no data, a
	// 404).
	DefaultSeriesMaxAge = 10 * time.Minute
	// DefaultQueryCacheMaxAge is how long a Prometheus answer is shared with later requests for
	// the same query: a third of the common 15s scrape interval, so that stock HPAs syncing every
	// 15s share about three queries per namespace and metric per round.
	DefaultQueryCacheMaxAge = 5 * time.Second
)

// minMaxQueryBytes is the smallest --metrics-max-query-bytes: room for a rule's query with a
// namespace, a metric selector and a few object names (longer lists are split).
const minMaxQueryBytes = 4 << 10

// Options are the command-line options of the metrics provider.
type Options struct {
	// RulesFile is the prometheus-adapter compatible rule file; empty serves rules.Default().
	RulesFile string
	// DiscoveryInterval is how often the series are rediscovered.
	DiscoveryInterval time.Duration
	// SeriesMaxAge is how far back each discovery pass looks for series.
	SeriesMaxAge time.Duration
	// QueryCacheMaxAge is how long an answer from Prometheus is shared with later requests for
	// the same namespace and metric (for the same query, when the rule is not separable); 0
	// turns sharing off.
	QueryCacheMaxAge time.Duration
	// MaxQueryBytes bounds the size of every rendered query (rules.Limits.MaxQueryBytes); 0
	// means rules.DefaultMaxQueryBytes.
	MaxQueryBytes int
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		DiscoveryInterval: DefaultDiscoveryInterval,
		SeriesMaxAge:      DefaultSeriesMaxAge,
		QueryCacheMaxAge:  DefaultQueryCacheMaxAge,
		MaxQueryBytes:     rules.DefaultMaxQueryBytes,
	}
}

// AddFlags adds --config, --metrics-relist-interval and --metrics-max-age (prometheus-adapter's
// names), --metrics-query-cache-max-age and --metrics-max-query-bytes to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.RulesFile, "config", o.RulesFile,
		"Rule file in prometheus-adapter's format. Empty serves the built-in default rules. "+
			"The file is re-read when it changes and on SIGHUP; a bad file is reported and the last good rules are kept.")
	fs.DurationVar(&o.DiscoveryInterval, "metrics-relist-interval", o.DiscoveryInterval,
		"How often series are rediscovered from Prometheus.")
	fs.DurationVar(&o.SeriesMaxAge, "metrics-max-age", o.SeriesMaxAge,
		"How far back discovery looks for series; at least --metrics-relist-interval.")
	fs.DurationVar(&o.QueryCacheMaxAge, "metrics-query-cache-max-age", o.QueryCacheMaxAge,
		"How long one Prometheus answer serves every custom or external metrics request for the same namespace and metric "+
			"(requests for the same query, for rules whose metricsQuery is not separable): concurrent requests share one query, "+
			"and later ones reuse its answer until it is this old, so an answer is never more than this behind Prometheus. "+
			"Sharing changes no value, only its age. Keep it below the scrape interval. 0 sends one query per request.")
	fs.IntVar(&o.MaxQueryBytes, "metrics-max-query-bytes", o.MaxQueryBytes,
		"The largest PromQL query podpilot sends, in bytes. The default is 1 KiB below VictoriaMetrics' default -search.maxQueryLen (16 KiB). "+
			fmt.Sprintf("A query naming more objects than fit is split into several queries for fewer objects each, run at most %d at a time and merged ", prometheus.MaxConcurrentChunks)+
			"(one failing fails the answer); a query that cannot be split (a huge metric label selector, a single object, or a metricsQuery "+
			"whose answer for some objects is not its answer for each of them) is refused: 400 Bad Request, and a metric error that holds the replicas.")
}

// Validate returns every problem with the options.
func (o *Options) Validate() []error {
	var errs []error
	if o.DiscoveryInterval <= 0 {
		errs = append(errs, fmt.Errorf("--metrics-relist-interval must be positive, got %s", o.DiscoveryInterval))
	}
	if o.SeriesMaxAge <= 0 {
		errs = append(errs, fmt.Errorf("--metrics-max-age must be positive, got %s", o.SeriesMaxAge))
	} else if o.SeriesMaxAge < o.DiscoveryInterval {
		errs = append(errs, fmt.Errorf("--metrics-max-age (%s) must be at least --metrics-relist-interval (%s), or series seen between passes are missed",
			o.SeriesMaxAge, o.DiscoveryInterval))
	}
	if o.MaxQueryBytes != 0 && o.MaxQueryBytes < minMaxQueryBytes {
		errs = append(errs, fmt.Errorf("--metrics-max-query-bytes must be at least %d, got %d", minMaxQueryBytes, o.MaxQueryBytes))
	}
	if o.QueryCacheMaxAge < 0 {
		errs = append(errs, fmt.Errorf("--metrics-query-cache-max-age must not be negative, got %s", o.QueryCacheMaxAge))
	}
	if o.RulesFile != "" {
		if fi, err := os.Stat(o.RulesFile); err != nil {
			errs = append(errs, fmt.Errorf("--config: %w", err))
		} else if fi.IsDir() {
			errs = append(errs, fmt.Errorf("--config %s is a directory, want a rule file", o.RulesFile))
		}
	}
	return errs
}

// Config is everything New needs.
type Config struct {
	Options
	// Prometheus answers series discovery and queries of the default backend (rules without
	// a backend field).
	Prometheus prometheus.Client
	// Backends builds the clients of the rule file's backends; nil refuses a rule file that
	// has any.
	Backends BackendFactory
	// Mapper normalizes group-resources and gives their kinds and versions.
	Mapper apimeta.RESTMapper
	// Informers gives the shared informers that resolve label selectors to object names.
	Informers Informers
	// Registry receives the provider's own metrics.
	Registry metrics.KubeRegistry
	// Reload, when it receives, makes Run re-read the rule file and rediscover at once (cmd
	// sends on SIGHUP). Nil means never.
	Reload <-chan struct{}
	// Clock drives the discovery and rule-file poll loops, gives the discovery window and
	// times discovery passes; nil means the real clock.
	Clock clock.WithTicker
}

// Informers gives the cluster's shared informers, one per resource. cmd builds the factories
// once, with transforms that strip objects, and hands them to every reader; the provider asks
// for an informer on a resource's first request and starts it with Start.
type Informers interface {
	// ForResource returns the shared informer of gvr; its objects carry at least their name,
	// namespace and labels.
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	// Start starts the informers asked for so far that are not running yet.
	Start(stopCh <-chan struct{})
}

// validate checks the dependencies; Options.Validate checks the options.
func (c *Config) validate() error {
	errs := c.Options.Validate()
	if c.Prometheus == nil {
		errs = append(errs, errors.New("prometheus client is required"))
	}
	if c.Mapper == nil {
		errs = append(errs, errors.New("rest mapper is required"))
	}
	if c.Informers == nil {
		errs = append(errs, errors.New("informers are required"))
	}
	if c.Registry == nil {
		errs = append(errs, errors.New("metrics registry is required"))
	}
	return utilerrors.NewAggregate(errs)
}
