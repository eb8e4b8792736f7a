package app

import (
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version/verflag"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"

	"github.com/podpilot/podpilot/pkg/autoscaler/controller"
	"github.com/podpilot/podpilot/pkg/provider/forward"
	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// defaultSecurePort is where podpilot serves its API when --secure-port is not set.
// It is above 1024 so that podpilot runs as a non-root user.
const defaultSecurePort = 6443

// Options holds everything podpilot is configured with on its command line.
type Options struct {
	// Adapter carries the API server's serving, delegated authentication and
	// authorization, and Kubernetes client options.
	Adapter basecmd.AdapterBase
	// Prometheus configures the connection to Prometheus.
	Prometheus *prometheus.Options
	// Metrics configures the rule file and metric discovery.
	Metrics *metricsapi.Options
	// Autoscaler configures the embedded PodAutoscaler controller.
	Autoscaler *controller.Options
	// Tenancy limits what PodAutoscalers may read beyond their namespace.
	Tenancy *metricsapi.TenancyOptions
	// Forward names the other external-metrics adapter that serves what podpilot does not.
	Forward *forward.Options
	// APIServices says which APIServices the install registers for podpilot.
	APIServices *APIServiceOptions
	// LeaderElection decides which replica runs the autoscaler.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Shards is the number of buckets the autoscaler's PodAutoscalers are spread over, each with
	// a Lease of its own; 1 is the single Lease (see shard/election).
	Shards int
	// Logs configures klog through component-base.
	Logs *logsapi.LoggingConfiguration
}

// NewOptions returns Options with podpilot's defaults.
func NewOptions() *Options {
	o := &Options{
		Prometheus:     prometheus.NewOptions(),
		Metrics:        metricsapi.NewOptions(),
		Autoscaler:     controller.NewOptions(),
		Tenancy:        metricsapi.NewTenancyOptions(),
		Forward:        forward.NewOptions(),
		APIServices:    NewAPIServiceOptions(),
		LeaderElection: newLeaderElection(),
		Shards:         1,
		Logs:           logsapi.NewLoggingConfiguration(),
	}
	o.Adapter.Name = "podpilot"
	return o
}

// Flags returns podpilot's flags grouped by section, for parsing and for --help.
func (o *Options) Flags() cliflag.NamedFlagSets {
	var fss cliflag.NamedFlagSets

	o.Adapter.FlagSet = fss.FlagSet("api server")
	o.Adapter.InstallFlags()
	serving := o.Adapter.SecureServing
	serving.BindPort = defaultSecurePort
	// No certificate directory by default: without --tls-cert-file a
	// self-signed certificate is kept in memory, so a read-only root
	// filesystem works. With --cert-dir it is written to (or read from)
	// <cert-dir>/apiserver.{crt,key}, the apiserver library's pair name.
	serving.ServerCert.CertDirectory = ""
	if f := o.Adapter.FlagSet.Lookup("secure-port"); f != nil {
		f.DefValue = fmt.Sprint(defaultSecurePort)
	}
	if f := o.Adapter.FlagSet.Lookup("cert-dir"); f != nil {
		f.DefValue = ""
	}
	// The library's flag needs the RemoteRequestHeaderUID feature gate, which podpilot does
	// not expose: every use of it fails validation, so it is not offered.
	_ = o.Adapter.FlagSet.MarkHidden("requestheader-uid-headers")

	o.Prometheus.AddFlags(fss.FlagSet("prometheus"))
	o.Metrics.AddFlags(fss.FlagSet("metrics discovery"))
	o.APIServices.AddFlags(fss.FlagSet("metrics discovery"))
	o.Forward.AddFlags(fss.FlagSet("external metrics forward"))
	o.Autoscaler.AddFlags(fss.FlagSet("autoscaler"))
	o.Tenancy.AddFlags(fss.FlagSet("autoscaler"))
	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fss.FlagSet("leader election"))
	fss.FlagSet("leader election").IntVar(&o.Shards, "autoscaler-shards", o.Shards,
		"The number of buckets the PodAutoscalers are spread over by a hash of namespace/name, each run by the replica "+
			"holding its Lease (<leader-elect-resource-name>-<i>). Each replica holds a fair share of the buckets. 1 runs "+
			"every PodAutoscaler on the holder of the single Lease <leader-elect-resource-name>.")
	logsapi.AddFlags(o.Logs, fss.FlagSet("logging"))
	verflag.AddFlags(fss.FlagSet("global"))
	fss.FlagSet("global").BoolP("help", "h", false, "Print this help and exit.")
	return fss
}

// Validate returns every problem with the options, aggregated.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Adapter.CustomMetricsAdapterServerOptions.Validate()...)
	errs = append(errs, o.Prometheus.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	errs = append(errs, o.Autoscaler.Validate()...)
	errs = append(errs, o.Tenancy.Validate()...)
	errs = append(errs, o.APIServices.Validate()...)
	errs = append(errs, o.Forward.Validate()...)
	errs = append(errs, o.validateShards()...)
	errs = append(errs, logsapi.Validate(o.Logs, nil, nil).ToAggregate())
	return utilerrors.NewAggregate(errs)
}

// maxShards bounds --autoscaler-shards: each bucket is a Lease, and a member slot another, each
// written once per retry period by its holder (64 buckets: 64 Lease writes per second at the
// default 2 s), so the count is a few per replica, not one per PodAutoscaler.
const maxShards = 64

func (o *Options) validateShards() []error {
	var errs []error
	if o.Shards < 1 || o.Shards > maxShards {
		errs = append(errs, fmt.Errorf("--autoscaler-shards must be in [1, %d], got %d", maxShards, o.Shards))
	}
	if o.Shards > 1 && !o.LeaderElection.LeaderElect {
		errs = append(errs, fmt.Errorf("--autoscaler-shards=%d needs --leader-elect: the buckets are Leases", o.Shards))
	}
	if o.Shards > 1 && o.LeaderElection.ResourceLock != resourcelock.LeasesResourceLock {
		errs = append(errs, fmt.Errorf("--autoscaler-shards=%d needs --leader-elect-resource-lock=%s", o.Shards, resourcelock.LeasesResourceLock))
	}
	return errs
}

// applyLogging applies the logging options; it is called once flags are parsed.
func (o *Options) applyLogging() error {
	if err := logsapi.ValidateAndApply(o.Logs, nil); err != nil {
		return fmt.Errorf("apply logging options: %w", err)
	}
	logs.InitLogs()
	return nil
}
