package scenario

import "time"

// Config is what a bench run measures and how big it is.
type Config struct {
	// PodpilotBinary is bin/podpilot; PodpilotArgs are added to its command line
	// (e.g. the QPS or query-cache flags of a newer podpilot).
	PodpilotBinary string
	PodpilotArgs   []string
	// Adapter is an optional prometheus-adapter binary measured side by side.
	Adapter string
	// AdapterCurrent is an optional prometheus-adapter built on podpilot's
	// library versions (hack/build-tools.sh prometheus-adapter-current),
	// scenario e's like-for-like memory baseline.
	AdapterCurrent string
	// PodcacheBinary is bench/cmd/podcache, scenario g's baseline.
	PodcacheBinary string
	// StateDir holds the bench cluster's state.
	StateDir string
	// ClusterEnv, when set, is the env file of a running local cluster
	// (hack/local-up.sh's) that the bench uses, and leaves running, instead of
	// starting its own: a large shape's pods are created once for several runs.
	ClusterEnv string

	// Scenarios to run, by letter (a–e and g; f, the Go benchmarks, runs without a cluster).
	Scenarios map[string]bool

	// Sizes are the N of scenarios b and c, ascending.
	Sizes []int
	// PodsPerTarget is how many pods each of scenario b and c's Deployments
	// runs before the step (2 unless set; the shape of kubernetes#139142 is 100).
	PodsPerTarget int
	// StepTo is the per-pod load of scenario c's step (from targetPerPod): 300
	// triples the pods; a smaller step keeps a large shape's pod count in reach.
	StepTo int
	// Shards is scenario s's --autoscaler-shards (6 unless set).
	Shards int
	// Namespaces the N workloads are spread over.
	Namespaces int
	// Rounds is how many sync periods a steady-state window lasts.
	Rounds int
	// StockHPAMax is the largest N scenario c also runs the stock HPA at
	// (0: every N); above it only PodAutoscalers run.
	StockHPAMax int
	// KCMQPS and KCMBurst are kube-controller-manager's client budget
	// (--kube-api-qps, --kube-api-burst; 20 and 30 are its defaults). Its
	// ReplicaSet controller creates the bench's pods within it, and its HPA
	// controller writes within it.
	KCMQPS, KCMBurst int

	// APIPods, APIConcurrency and APIDuration shape scenario a.
	APIPods        int
	APIConcurrency int
	APIDuration    time.Duration

	// ReactSteps is how many staggered steps scenario d takes per autoscaler kind.
	ReactSteps int

	// MemorySeries are the extra Prometheus series of scenario e, spread over MetricNames names.
	MemorySeries []int
	MetricNames  int

	// Pods are the pod counts of scenario g, ascending (a level 0 is added).
	Pods []int
	// PodShape is the shape of scenario g's pods: PodShapeMinimal or PodShapeRealistic.
	PodShape string

	// ScrapeInterval and SyncPeriod configure Prometheus, kube-controller-manager's
	// HPA controller and podpilot's autoscaler alike; RelistInterval is
	// podpilot's (and the adapter's) discovery interval.
	ScrapeInterval time.Duration
	SyncPeriod     time.Duration
	RelistInterval time.Duration
}

// Metric names the bench's exporter serves per pod (a gauge), and the
// autoscalers' target per pod.
const (
	loadMetric = "bench_load"
	// stepCounter is a per-pod counter growing at the same per-pod rate as
	// loadMetric; the default rules serve it rated over 1m as
	// stepRateMetric, and the bench's extra rule (fastRule) as stepFastMetric.
	stepCounter    = "bench_step_total"
	stepRateMetric = "bench_step_per_second"
	stepFastMetric = "bench_step_fast"
	targetPerPod   = 100
	baseReplicas   = 2
	maxReplicas    = 20 // at least; scenario b and c allow 4 × PodsPerTarget
	benchLabel     = "podpilot-bench"
	benchNSPrefix  = "bench-"
)
