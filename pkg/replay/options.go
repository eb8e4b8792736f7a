package replay

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// maxPoints is Prometheus' limit of points per series in one range query: the trace and the
// history are read in chunks of at most that.
const maxPoints = 11000

// MaxSteps is the most steps one replay runs: a week at 15 s (40320) and a month at one minute
// (44640) fit. Each step holds about 150 bytes per variant and costs one decision per variant;
// the predictive run refits every refresh (docs/dry-run-and-replay.md states the cost).
const MaxSteps = 50000

// Options are the command-line options of `podpilot replay`.
type Options struct {
	// Prometheus are the --prometheus-* options, as the server's.
	Prometheus *prometheus.Options
	// RulesFile is the server's rule file; empty uses the built-in default rules.
	RulesFile string
	// Namespace is the workload's namespace; empty takes each PodAutoscaler's own.
	Namespace string
	// From and To bound the history: RFC 3339, "now", or a duration relative to now ("-24h").
	From, To string
	// Step is the time between replayed decisions, the sync period being modelled.
	Step time.Duration
	// Files are the PodAutoscaler files to replay.
	Files []string
	// Out is the directory for each spec's table and chart; empty writes none.
	Out string
	// ReadyDelay is how long a replayed pod takes to become ready.
	ReadyDelay time.Duration
	// DownscaleStabilization and Tolerance are the server's --autoscaler-* defaults being modelled.
	DownscaleStabilization time.Duration
	// Tolerance is the server's --autoscaler-tolerance.
	Tolerance float64
	// PodRequests are each pod's requests (cpu=500m,memory=256Mi), for Utilization targets.
	PodRequests map[string]string
	// ContainerRequests are each container's own requests (app/cpu=250m), for the Utilization
	// targets of ContainerResource metrics.
	ContainerRequests map[string]string
	// PodNameRegex overrides the pattern matching the workload's pods by name.
	PodNameRegex string
	// Prediction are the --prediction-* options.
	Prediction PredictionOptions
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		Prometheus: prometheus.NewOptions(), From: "-24h", To: "now", Step: 15 * time.Second,
		ReadyDelay: 30 * time.Second, DownscaleStabilization: normalize.DefaultDownscaleStabilizationWindow,
		Tolerance: replicas.DefaultTolerance, Prediction: DefaultPredictionOptions(),
	}
}

// Flags returns the options' flags by section.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	o.Prometheus.AddFlags(fss.FlagSet("prometheus"))
	fs := fss.FlagSet("replay")
	o.addSpecFlags(fs)
	o.addHistoryFlags(fs)
	o.Prediction.AddFlags(fss.FlagSet("prediction"))
	return fss
}

// AddHistoryFlags adds to fss the flags that choose the history and how it is read and modelled
// (--prometheus-*, --config, --from, --to, --step, --ready-delay, the requests and the pods'
// names), without the specs' own: what `podpilot migrate --compare` shares with replay.
func (o *Options) AddHistoryFlags(fss *cliflag.NamedFlagSets) {
	o.Prometheus.AddFlags(fss.FlagSet("prometheus"))
	o.addHistoryFlags(fss.FlagSet("replay"))
}

// addSpecFlags adds the flags of the specs replay reads and of what it writes.
func (o *Options) addSpecFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "Namespace of the workload; unset takes each PodAutoscaler's metadata.namespace.")
	fs.StringArrayVarP(&o.Files, "filename", "f", o.Files, "PodAutoscaler file to replay. Repeatable: the specs are replayed side by side.")
	fs.StringVar(&o.Out, "out", o.Out, "Directory for each spec's table (<name>.csv) and chart (<name>.svg); unset writes only the summary.")
	fs.DurationVar(&o.DownscaleStabilization, "autoscaler-downscale-stabilization", o.DownscaleStabilization,
		"The server's default scale-down stabilization window being modelled.")
	fs.Float64Var(&o.Tolerance, "autoscaler-tolerance", o.Tolerance, "The server's default tolerance being modelled.")
}

// addHistoryFlags adds the flags of the history and of its model.
func (o *Options) addHistoryFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.RulesFile, "config", o.RulesFile, "The server's rule file (prometheus-adapter format); unset uses the built-in default rules.")
	fs.StringVar(&o.From, "from", o.From, "Start of the history: RFC 3339, now, or a duration relative to now (e.g. -24h).")
	fs.StringVar(&o.To, "to", o.To, "End of the history: RFC 3339, now, or a duration relative to now.")
	fs.DurationVar(&o.Step, "step", o.Step, "Time between replayed decisions: the sync period being modelled (the server's --autoscaler-sync-period).")
	fs.DurationVar(&o.ReadyDelay, "ready-delay", o.ReadyDelay, "How long a replayed new pod takes to become ready and take load.")
	fs.StringToStringVar(&o.PodRequests, "pod-requests", o.PodRequests,
		"Each pod's resource requests, e.g. cpu=500m,memory=256Mi; needed for Utilization targets.")
	fs.StringToStringVar(&o.ContainerRequests, "container-requests", o.ContainerRequests,
		"Each container's own resource requests, as <container>/<resource>=<quantity>, e.g. app/cpu=250m; needed for the Utilization targets of containerResourceMetrics.")
	fs.StringVar(&o.PodNameRegex, "pod-name-regex", o.PodNameRegex,
		"Regular expression matching the workload's pods by name; unset matches <deployment>-<hash>-<suffix> or <statefulset>-<ordinal>.")
}

// Validate returns every problem with the options.
func (o *Options) Validate() []error {
	errs := append(o.ValidateHistory(), o.Prediction.Validate()...)
	if len(o.Files) == 0 {
		errs = append(errs, errors.New("at least one -f PodAutoscaler file is required"))
	}
	return errs
}

// ValidateHistory returns every problem with the options AddHistoryFlags adds.
func (o *Options) ValidateHistory() []error {
	errs := o.Prometheus.Validate()
	if o.Step <= 0 {
		errs = append(errs, fmt.Errorf("--step must be positive, got %s", o.Step))
	}
	if o.ReadyDelay < 0 || o.DownscaleStabilization < 0 || o.Tolerance < 0 {
		errs = append(errs, errors.New("--ready-delay, --autoscaler-downscale-stabilization and --autoscaler-tolerance must not be negative"))
	}
	if _, err := o.requests(); err != nil {
		errs = append(errs, err)
	}
	if o.PodNameRegex != "" {
		if _, err := regexp.Compile(o.PodNameRegex); err != nil {
			errs = append(errs, fmt.Errorf("--pod-name-regex: %w", err))
		}
	}
	for _, t := range []struct{ flag, value string }{{"--from", o.From}, {"--to", o.To}} {
		if _, err := parseTime(t.value, time.Time{}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.flag, err))
		}
	}
	return errs
}

// window resolves --from, --to and --step against c's now, and checks that the window holds at
// least one step and at most what one range query returns.
func (o *Options) window(c clock.PassiveClock) (Window, error) {
	now := c.Now().Truncate(time.Second)
	from, err := parseTime(o.From, now)
	if err != nil {
		return Window{}, fmt.Errorf("--from: %w", err)
	}
	to, err := parseTime(o.To, now)
	if err != nil {
		return Window{}, fmt.Errorf("--to: %w", err)
	}
	switch {
	case !from.Before(to):
		return Window{}, fmt.Errorf("--from %s (%s) is not before --to %s (%s)", o.From, from.UTC().Format(time.RFC3339), o.To, to.UTC().Format(time.RFC3339))
	case to.Sub(from)/o.Step >= MaxSteps:
		return Window{}, fmt.Errorf("--from to --to is %s, more than %d steps of %s; raise --step", to.Sub(from), MaxSteps, o.Step)
	}
	return Window{From: from, To: to, Step: o.Step}, nil
}

// parseTime reads RFC 3339, "now", or a duration relative to now.
func parseTime(s string, now time.Time) (time.Time, error) {
	if s == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339, now, nor a duration like -24h", s)
	}
	return now.Add(d), nil
}

// requests parses --pod-requests and --container-requests into milli-units.
func (o *Options) requests() (Requests, error) {
	out := Requests{Pod: map[corev1.ResourceName]int64{}, Containers: map[string]map[corev1.ResourceName]int64{}}
	for name, v := range o.PodRequests {
		q, err := requestOf("--pod-requests", name, v)
		if err != nil {
			return Requests{}, err
		}
		out.Pod[corev1.ResourceName(name)] = q
	}
	for key, v := range o.ContainerRequests {
		container, name, ok := strings.Cut(key, "/")
		if !ok || container == "" {
			return Requests{}, fmt.Errorf("--container-requests %s=%s: want <container>/<resource>=<quantity>", key, v)
		}
		q, err := requestOf("--container-requests "+container+"/", name, v)
		if err != nil {
			return Requests{}, err
		}
		if out.Containers[container] == nil {
			out.Containers[container] = map[corev1.ResourceName]int64{}
		}
		out.Containers[container][corev1.ResourceName(name)] = q
	}
	return out, nil
}

// requestOf parses one request of resource name (cpu or memory) given with flag.
func requestOf(flag, name, v string) (int64, error) {
	if name != string(corev1.ResourceCPU) && name != string(corev1.ResourceMemory) {
		return 0, fmt.Errorf("%s: %q is not cpu or memory", flag, name)
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, fmt.Errorf("%s %s=%s: %w", flag, name, v, err)
	}
	m, err := replicas.MilliOf(q)
	if err != nil {
		return 0, fmt.Errorf("%s %s=%s: %w", flag, name, v, err)
	}
	return m, nil
}

// ruleSet loads and compiles the rule file, or the default rules.
func (o *Options) ruleSet() (*rules.RuleSet, error) {
	cfg := rules.Default()
	if o.RulesFile != "" {
		data, err := os.ReadFile(o.RulesFile)
		if err != nil {
			return nil, fmt.Errorf("read rule file: %w", err)
		}
		if cfg, err = rules.Load(data); err != nil {
			return nil, fmt.Errorf("load rule file %s: %w", o.RulesFile, err)
		}
	}
	return rules.Compile(cfg, rules.StaticMapper(), rules.Limits{})
}

// model returns the load model's and the algorithm's settings.
func (o *Options) model(requests Requests) Model {
	cfg := decision.DefaultConfig()
	cfg.Replicas.Tolerances = replicas.Tolerances{ScaleDown: o.Tolerance, ScaleUp: o.Tolerance}
	cfg.DownscaleStabilizationWindow = o.DownscaleStabilization
	return Model{Config: cfg, SyncPeriod: o.Step, ReadyDelay: o.ReadyDelay, Requests: requests}
}

// podNameRegex compiles --pod-name-regex; nil when unset.
func (o *Options) podNameRegex() *regexp.Regexp {
	if strings.TrimSpace(o.PodNameRegex) == "" {
		return nil
	}
	return regexp.MustCompile(o.PodNameRegex)
}
