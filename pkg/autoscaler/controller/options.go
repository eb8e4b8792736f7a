package controller

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// Defaults of Options, upstream's kube-controller-manager HPA defaults where it has them.
const (
	// DefaultSyncPeriod is how often every PodAutoscaler is synced.
	DefaultSyncPeriod = 15 * time.Second
	// DefaultWorkers is the number of PodAutoscalers synced concurrently. A worker mostly waits on
	// the API server and the shared metric fetches, so it is set above the 2 to 4 cores podpilot
	// usually has, and high enough that workers waiting for the scale write budget leave others to
	// decide (upstream's HPA has 5).
	DefaultWorkers = 16
	// DefaultKubeAPIQPS is the rate of each of the autoscaler's write budgets (see AddFlags). A round
	// in which nothing a reader can see changed writes nothing; a round in which every autoscaler
	// rescales writes each scale once and each status once, on separate budgets, so a fleet of 50 ×
	// 15 s + 100 = 850 autoscalers all follow one load step within one 15 s sync period, ten times
	// client-go's default of 5.
	DefaultKubeAPIQPS = 50
	// DefaultKubeAPIBurst is the burst of each write budget: 100 autoscalers rescale at once.
	DefaultKubeAPIBurst = 100
	// DefaultScrapeMargin is how long after a scrape's timestamp an aligned round runs: the scrape
	// itself, its append and the query's own lookback take milliseconds for a small target.
	DefaultScrapeMargin = 500 * time.Millisecond
	// DefaultPredictionRefresh is how often a forecast model is fitted again (pkg/autoscaler/prediction).
	DefaultPredictionRefresh = prediction.DefaultRefresh
	// DefaultPredictionMaxModels is how many histories (distinct namespace, metric and selector) the
	// forecast holds a model of, by default: see docs/predictive-scaling.md for the memory each takes.
	DefaultPredictionMaxModels = prediction.DefaultMaxModels
	// maxPredictionRefresh is the longest refresh: a model serves for up to 1+MaxStaleFits
	// refreshes after its fit (prediction.Models), one lead time ahead, and the largest lead admission
	// allows (MaxLead, spec.prediction.leadTimeSeconds; the lead of one PodAutoscaler is only
	// known per round) must then stay within the forecast's horizon: 2 × 2h30m + 1h = 6h.
	maxPredictionRefresh = (forecast.MaxHorizon - prediction.MaxLead) / (1 + prediction.MaxStaleFits)
)

// What the sync period sets besides how often a PodAutoscaler is synced (docs/how-it-decides.md,
// "Timing"): the deadline of one round (roundTimeout) and of its metric reads (readTimeout); how
// long a metric answer is shared and a call to a source may run (see New); the liveness limit
// (livenessLimit); the longest retry backoff; and, when a leader reads a checkpoint, how long
// ago the last round counts (normalize.FromCheckpoint). A round's history is dated by the clock,
// not by the period.

// roundTimeout bounds one round of one PodAutoscaler, from its first read to its last write: a
// round that cannot finish within its own period is late anyway.
func (o *Options) roundTimeout() time.Duration { return o.SyncPeriod }

// readTimeout bounds a round's metric reads, which run concurrently: three quarters of the round,
// the rest left for its writes. A metric not read by then fails for this round (and so never
// scales down); the call to the source goes on for the next round to share.
func (o *Options) readTimeout() time.Duration { return o.roundTimeout() * 3 / 4 }

// livenessLimit is how long the loop may make no progress before the liveness check fails:
// three rounds' deadlines, so rounds that all run into their deadline still pass.
func (o *Options) livenessLimit() time.Duration { return 3 * o.roundTimeout() }

// namespaceShare is how many PodAutoscalers of one namespace sync at once: half the workers (at
// least one), so a namespace whose rounds are slow leaves the other half to the others.
func (o *Options) namespaceShare() int { return (o.Workers + 1) / 2 }

// Options are the command-line options of the autoscaler.
type Options struct {
	// Enabled runs the autoscaler; when false only the metrics API is served.
	Enabled bool
	// SyncPeriod is how often every PodAutoscaler is synced.
	SyncPeriod time.Duration
	// Workers is the number of PodAutoscalers synced concurrently.
	Workers int
	// DownscaleStabilization is the default scale-down stabilization window.
	DownscaleStabilization time.Duration
	// Tolerance is the default distance of the usage ratio from 1.0 within which nothing scales.
	Tolerance float64
	// CPUInitializationPeriod is how long after a pod starts its cpu samples may be skipped.
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay is how long after a pod starts it counts as initializing while not ready.
	InitialReadinessDelay time.Duration
	// KubeAPIQPS and KubeAPIBurst size each of the autoscaler's budgets of Kubernetes API calls.
	KubeAPIQPS float32
	// KubeAPIBurst is the burst of each budget.
	KubeAPIBurst int
	// PerObjectMetrics exports per-PodAutoscaler series on /metrics.
	PerObjectMetrics bool
	// AlignToScrapes runs each PodAutoscaler's rounds just after its first Prometheus metric's data
	// lands in Prometheus, instead of on a fixed phase (see nextround.go).
	AlignToScrapes bool
	// ScrapeMargin is how long after a landing an aligned round runs.
	ScrapeMargin time.Duration
	// PredictionRefresh is how often each forecast model is fitted again (spec.prediction).
	PredictionRefresh time.Duration
	// PredictionMaxModels bounds the forecast models held (one per distinct history); past it the
	// least recently used is evicted and refitted in the background at its next round.
	PredictionMaxModels int
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		Enabled:                 true,
		SyncPeriod:              DefaultSyncPeriod,
		Workers:                 DefaultWorkers,
		DownscaleStabilization:  normalize.DefaultDownscaleStabilizationWindow,
		Tolerance:               replicas.DefaultTolerance,
		CPUInitializationPeriod: replicas.DefaultCPUInitializationPeriod,
		InitialReadinessDelay:   replicas.DefaultDelayOfInitialReadinessStatus,
		KubeAPIQPS:              DefaultKubeAPIQPS,
		KubeAPIBurst:            DefaultKubeAPIBurst,
		PerObjectMetrics:        true,
		AlignToScrapes:          true,
		ScrapeMargin:            DefaultScrapeMargin,
		PredictionRefresh:       DefaultPredictionRefresh,
		PredictionMaxModels:     DefaultPredictionMaxModels,
	}
}

// AddFlags adds the --autoscaler-* flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "autoscaler-enabled", o.Enabled,
		"Run the embedded autoscaler for PodAutoscaler resources (only while this replica holds the leader lease).")
	fs.DurationVar(&o.SyncPeriod, "autoscaler-sync-period", o.SyncPeriod,
		"How often every PodAutoscaler is synced. It also bounds one round of one PodAutoscaler (its metric reads, run concurrently, "+
			"get three quarters of it; a metric not read by then fails for the round and so never scales down), how long a metric "+
			"answer is shared (half of it) and a call to a source may run (all of it), the longest retry backoff, and the liveness "+
			"limit (three of it without progress). --autoscaler-downscale-stabilization may span at most 1000 of it.")
	fs.IntVar(&o.Workers, "autoscaler-workers", o.Workers,
		"How many PodAutoscalers are synced concurrently; workers mostly wait on the API server and on shared metric fetches.")
	fs.DurationVar(&o.DownscaleStabilization, "autoscaler-downscale-stabilization", o.DownscaleStabilization,
		"The scale-down stabilization window of PodAutoscalers that do not set behavior.scaleDown.stabilizationWindowSeconds.")
	fs.Float64Var(&o.Tolerance, "autoscaler-tolerance", o.Tolerance,
		"The distance of the usage ratio from 1.0 within which nothing scales, unless a PodAutoscaler sets its own.")
	fs.DurationVar(&o.CPUInitializationPeriod, "autoscaler-cpu-initialization-period", o.CPUInitializationPeriod,
		"How long after a pod starts its cpu samples may be skipped.")
	fs.DurationVar(&o.InitialReadinessDelay, "autoscaler-initial-readiness-delay", o.InitialReadinessDelay,
		"How long after a pod starts it counts as initializing while not ready.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"QPS of each of the autoscaler's budgets of Kubernetes API calls. Decisions come first: writes of the targets' "+
			"scale subresource have a budget of their own, so they never wait behind status writes; PodAutoscaler status "+
			"writes have another, which no round waits for: when it is spent, a write that records a rescale, a new history "+
			"or generation goes to a status writer that waits for it, and any other waits for the next round; events and "+
			"the lease and metrics.k8s.io reads have one each. Informers are on none of them: the shared cache of the "+
			"cluster uses --client-qps, like the API server's own clients, and the PodAutoscaler informer is not throttled.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst,
		"Burst of each of the autoscaler's budgets of Kubernetes API calls (see --kube-api-qps).")
	fs.BoolVar(&o.PerObjectMetrics, "autoscaler-per-object-metrics", o.PerObjectMetrics,
		"Export per-PodAutoscaler series (replicas, metric values and targets, conditions) on /metrics; turn off for very many PodAutoscalers.")
	fs.BoolVar(&o.AlignToScrapes, "autoscaler-align-to-scrapes", o.AlignToScrapes,
		"Run each PodAutoscaler's rounds just after its first pods, object or external metric's data lands in Prometheus (learnt from the raw series' "+
			"sample times, one small query per namespace and metric per refresh) instead of on a fixed phase; rounds keep "+
			"the sync period on average. Off: a fixed period, as the stock HPA.")
	fs.DurationVar(&o.ScrapeMargin, "autoscaler-scrape-margin", o.ScrapeMargin,
		"How long after a scrape's timestamp an aligned round runs (see --autoscaler-align-to-scrapes).")
	fs.DurationVar(&o.PredictionRefresh, "autoscaler-prediction-refresh", o.PredictionRefresh,
		"How often the forecast of PodAutoscalers with spec.prediction is fitted again on the metric's Prometheus history: once per "+
			"distinct namespace, metric and selector (shared by every PodAutoscaler on it), reading only the history since the last fit; "+
			"never per round. A history too short, gappy or not seasonal is tried again after it too; one that could not be read, after a minute.")
	fs.IntVar(&o.PredictionMaxModels, "autoscaler-prediction-max-models", o.PredictionMaxModels,
		"How many forecast models (one per distinct namespace, metric and selector with spec.prediction) are held, with the history "+
			"each refit extends (about 250 KiB each with 28 days of history, see docs/predictive-scaling.md). Past it the least recently "+
			"used is evicted, and refitted in the background at its next round (a full history read): set it above the number of distinct histories.")
}

// Validate returns every problem with the options.
func (o *Options) Validate() []error {
	var errs []error
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--autoscaler-sync-period must be positive, got %s", o.SyncPeriod))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--autoscaler-workers must be at least 1, got %d", o.Workers))
	}
	if o.DownscaleStabilization < 0 {
		errs = append(errs, fmt.Errorf("--autoscaler-downscale-stabilization must not be negative, got %s", o.DownscaleStabilization))
	}
	if !(o.Tolerance >= 0) || math.IsInf(o.Tolerance, 1) {
		errs = append(errs, fmt.Errorf("--autoscaler-tolerance must be a finite number, not negative, got %g", o.Tolerance))
	}
	if o.CPUInitializationPeriod < 0 {
		errs = append(errs, fmt.Errorf("--autoscaler-cpu-initialization-period must not be negative, got %s", o.CPUInitializationPeriod))
	}
	if o.InitialReadinessDelay < 0 {
		errs = append(errs, fmt.Errorf("--autoscaler-initial-readiness-delay must not be negative, got %s", o.InitialReadinessDelay))
	}
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be positive, got %g", o.KubeAPIQPS))
	}
	if o.ScrapeMargin < 0 || (o.SyncPeriod > 0 && o.ScrapeMargin >= o.SyncPeriod) {
		errs = append(errs, fmt.Errorf("--autoscaler-scrape-margin must be at least 0 and below --autoscaler-sync-period, got %s", o.ScrapeMargin))
	}
	if o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1, got %d", o.KubeAPIBurst))
	}
	errs = append(errs, o.validatePrediction()...)
	return append(errs, o.validateHistoryBounds()...)
}

// validatePrediction checks the prediction flags.
func (o *Options) validatePrediction() []error {
	var errs []error
	if o.PredictionRefresh < time.Minute || o.PredictionRefresh > maxPredictionRefresh {
		errs = append(errs, fmt.Errorf("--autoscaler-prediction-refresh must be within [1m, %s], got %s: a model answers for up to %d refreshes "+
			"after its fit, one lead time ahead (at most %s, the bound of spec.prediction.leadTimeSeconds), within the forecast's horizon of %s",
			maxPredictionRefresh, o.PredictionRefresh, 1+prediction.MaxStaleFits, prediction.MaxLead, forecast.MaxHorizon))
	}
	if o.PredictionMaxModels < 1 {
		errs = append(errs, fmt.Errorf("--autoscaler-prediction-max-models must be at least 1, got %d", o.PredictionMaxModels))
	}
	return errs
}

// validateHistoryBounds checks that a status holds every round the flag's downscale window looks
// back over: at most MaxRecommendations rounds. A spec's own windows (up to 3600 s) may span more
// rounds at short periods; the oldest runs are then folded, never dropped (see state.PersistHistory).
// Scale events fit MaxScaleEvents whatever the period (see rescaleGap).
func (o *Options) validateHistoryBounds() []error {
	if o.SyncPeriod <= 0 {
		return nil
	}
	if rounds := o.DownscaleStabilization / o.SyncPeriod; rounds > podpilotv1alpha1.MaxRecommendations {
		return []error{fmt.Errorf("--autoscaler-downscale-stabilization %s spans %d rounds of --autoscaler-sync-period %s, more than the %d recommendations a status holds",
			o.DownscaleStabilization, rounds, o.SyncPeriod, podpilotv1alpha1.MaxRecommendations)}
	}
	return nil
}

// decisionConfig returns the algorithm's settings.
func (o *Options) decisionConfig() decision.Config {
	return decision.Config{
		Replicas: replicas.Config{
			Tolerances:                    replicas.Tolerances{ScaleDown: o.Tolerance, ScaleUp: o.Tolerance},
			CPUInitializationPeriod:       o.CPUInitializationPeriod,
			DelayOfInitialReadinessStatus: o.InitialReadinessDelay,
		},
		DownscaleStabilizationWindow: o.DownscaleStabilization,
	}
}
