package migrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
	"github.com/podpilot/podpilot/pkg/replay"
)

// Defaults of Options.
const (
	// DefaultApplyWait bounds the wait for a PodAutoscaler's first dry-run decision per target.
	DefaultApplyWait = 2 * time.Minute
	// defaultPollInterval is how often the PodAutoscaler's status is read while waiting.
	defaultPollInterval = 2 * time.Second
)

// Options are the command-line options of `podpilot migrate`.
type Options struct {
	// Files are HPA YAML files (multi-document, or Lists); "-" reads stdin.
	Files []string
	// FromCluster reads the HPAs of the cluster instead.
	FromCluster bool
	// Namespace limits --from-cluster to one namespace; empty reads all.
	Namespace string
	// Kubeconfig and Context select the cluster, as kubectl's flags.
	Kubeconfig string
	// Context is the kubeconfig context; empty uses the current one.
	Context string
	// DryRunOff writes the PodAutoscalers without spec.dryRun, to replace the HPAs at once.
	DryRunOff bool
	// Controller are the kube-controller-manager HPA flags the HPAs ran under.
	Controller hpaconv.ControllerFlags
	// Apply hands each target over in the cluster instead of printing YAML.
	Apply bool
	// ApplyWait bounds the wait for each PodAutoscaler's first dry-run decision.
	ApplyWait time.Duration
	// PollInterval is how often the PodAutoscaler's status is read while waiting.
	PollInterval time.Duration
	// Compare replays each converted PodAutoscaler over Prometheus history and compares it with
	// its HPA's recorded desired replicas, instead of printing YAML.
	Compare bool
	// Replay are `podpilot replay`'s history options, which --compare reads with.
	Replay *replay.Options
}

// NewOptions returns Options with their defaults: upstream's kube-controller-manager flags.
func NewOptions() *Options {
	return &Options{Controller: hpaconv.UpstreamDefaults(), ApplyWait: DefaultApplyWait, PollInterval: defaultPollInterval,
		Replay: replay.NewOptions()}
}

// Flags returns the options' flags by section.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets
	src := fss.FlagSet("source")
	src.StringArrayVarP(&o.Files, "filename", "f", o.Files, "HorizontalPodAutoscaler YAML or JSON to convert: several documents, or a List as kubectl get hpa -o yaml prints; - reads stdin. Repeatable.")
	src.BoolVar(&o.FromCluster, "from-cluster", o.FromCluster, "Read the HorizontalPodAutoscalers of the cluster (all namespaces, or --namespace).")
	src.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "With --from-cluster, only this namespace.")
	src.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to the kubeconfig file; unset uses KUBECONFIG or ~/.kube/config, as kubectl.")
	src.StringVar(&o.Context, "context", o.Context, "The kubeconfig context to use.")
	out := fss.FlagSet("output")
	out.BoolVar(&o.DryRunOff, "dry-run-off", o.DryRunOff,
		"Write the PodAutoscalers without spec.dryRun: true. By default they are dry-run, to run beside their HPAs and show their decisions in status.")
	o.addControllerFlags(fss.FlagSet("kube-controller-manager"))
	apply := fss.FlagSet("apply")
	apply.BoolVar(&o.Apply, "apply", o.Apply,
		"With --from-cluster: hand each target over from its HPA to its PodAutoscaler: create it in dryRun beside the HPA, wait for its first decision, "+
			"delete the HPA, turn dryRun off. Rerunning finishes any hand-over an interruption left.")
	apply.DurationVar(&o.ApplyWait, "apply-wait", o.ApplyWait,
		"How long --apply waits for each PodAutoscaler's first dry-run decision (status for its current spec, metrics read) before it leaves that target to its HPA.")
	fss.FlagSet("compare").BoolVar(&o.Compare, "compare", o.Compare,
		"Instead of printing YAML, replay each PodAutoscaler over Prometheus history (the --prometheus-* and replay flags, as podpilot replay's) "+
			"and compare its desired replicas with its HPA's recorded ones (kube-state-metrics' kube_horizontalpodautoscaler_status_desired_replicas). "+
			"Exit status 1 unless every pair was compared and agreed within one step.")
	o.Replay.AddHistoryFlags(&fss)
	return fss
}

func (o *Options) addControllerFlags(fs *pflag.FlagSet) {
	c := &o.Controller
	fs.Float64Var(&c.Tolerance, "hpa-tolerance", c.Tolerance, "kube-controller-manager's --horizontal-pod-autoscaler-tolerance the HPAs ran with.")
	fs.DurationVar(&c.DownscaleStabilization, "hpa-downscale-stabilization", c.DownscaleStabilization,
		"kube-controller-manager's --horizontal-pod-autoscaler-downscale-stabilization the HPAs ran with.")
	fs.DurationVar(&c.SyncPeriod, "hpa-sync-period", c.SyncPeriod, "kube-controller-manager's --horizontal-pod-autoscaler-sync-period the HPAs ran with.")
	fs.DurationVar(&c.CPUInitializationPeriod, "hpa-cpu-initialization-period", c.CPUInitializationPeriod,
		"kube-controller-manager's --horizontal-pod-autoscaler-cpu-initialization-period the HPAs ran with.")
	fs.DurationVar(&c.InitialReadinessDelay, "hpa-initial-readiness-delay", c.InitialReadinessDelay,
		"kube-controller-manager's --horizontal-pod-autoscaler-initial-readiness-delay the HPAs ran with.")
}

// Validate returns every problem with the options, aggregated.
func (o *Options) Validate() error {
	var errs []error
	switch {
	case o.FromCluster && len(o.Files) > 0:
		errs = append(errs, errors.New("give either --from-cluster or -f, not both"))
	case !o.FromCluster && len(o.Files) == 0:
		errs = append(errs, errors.New("give --from-cluster or -f FILE"))
	}
	if o.Namespace != "" && !o.FromCluster {
		errs = append(errs, errors.New("--namespace applies to --from-cluster only"))
	}
	errs = append(errs, o.validateApply()...)
	if o.Compare {
		errs = append(errs, o.Replay.ValidateHistory()...)
	}
	for _, err := range o.Controller.Validate() {
		errs = append(errs, fmt.Errorf("kube-controller-manager flags: %w", err))
	}
	return utilerrors.NewAggregate(errs)
}

// validateApply returns the problems with --apply and the flags that go with it.
func (o *Options) validateApply() []error {
	var errs []error
	if o.Apply && !o.FromCluster {
		errs = append(errs, errors.New("--apply needs --from-cluster"))
	}
	if o.Apply && o.DryRunOff {
		errs = append(errs, errors.New("--apply always starts each PodAutoscaler in dryRun beside its HPA; --dry-run-off does not apply"))
	}
	if o.ApplyWait <= 0 || o.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("--apply-wait must be positive, got %s", o.ApplyWait))
	}
	if o.Compare && o.Apply {
		errs = append(errs, errors.New("--compare reports and hands nothing over: run --apply after it, not with it"))
	}
	return errs
}
