package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"k8s.io/apiserver/pkg/server/healthz"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/flowcontrol"
	componentbaseconfig "k8s.io/component-base/config"
	compbasemetrics "k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/podpilot/podpilot/pkg/autoscaler/controller"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/shard/election"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
)

// defaultLeaseNamespace holds the leader election Lease when POD_NAMESPACE is unset.
const defaultLeaseNamespace = "podpilot-system"

// newLeaderElection returns podpilot's leader election defaults: on, with a
// Lease named podpilot in the pod's own namespace.
func newLeaderElection() componentbaseconfig.LeaderElectionConfiguration {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = defaultLeaseNamespace
	}
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:       true,
		LeaseDuration:     metav1Duration(15 * time.Second),
		RenewDeadline:     metav1Duration(10 * time.Second),
		RetryPeriod:       metav1Duration(2 * time.Second),
		ResourceLock:      resourcelock.LeasesResourceLock,
		ResourceName:      "podpilot",
		ResourceNamespace: ns,
	}
}

// autoscaler is the embedded PodAutoscaler controller with what it runs on:
// informers (started on every replica) and the controller loop (run on the
// leader only).
type autoscaler struct {
	ctrl        *controller.Controller
	kube        kubernetes.Interface
	kubeInf     kubeinformers.SharedInformerFactory
	podpilotInf externalversions.SharedInformerFactory
	broadcaster events.EventBroadcaster
	election    componentbaseconfig.LeaderElectionConfiguration
	// shards holds this replica's buckets when --autoscaler-shards > 1; nil with one Lease.
	shards *election.Shards
	synced atomic.Bool
}

// clientsConfig returns cfg with its own rate limiter, so that the client built from it draws on
// a budget of its own; qps < 0 means no client-side limit.
func clientsConfig(cfg *rest.Config, qps float32, burst int) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = qps, burst, nil
	if qps > 0 {
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	return c
}

// metricSources is what the autoscaler reads in-process from podpilot's
// provider: custom, object and external metrics, when the data behind a
// custom or external metric landed (to align rounds with scrapes), and their
// history (for the forecast).
type metricSources interface {
	metrics.CustomSource
	metrics.ExternalSource
	metrics.SampleTimeSource
	historyReads
}

// newAutoscaler builds the controller on the same custom and external metrics
// provider as the API server, so custom, object and external metrics never
// leave the process. Each kind of
// call has a budget of its own, sized by --kube-api-qps and --kube-api-burst:
// scale writes (decisions come first), status writes (the controller's
// StatusLimiter, which defers cosmetic writes), events, and the reads
// (the lease, metrics.k8s.io). Its own metrics go to registry. Its pod,
// deployment, statefulset, replicaset and horizontalpodautoscaler informers come
// from the shared typed factory
// kubeInf, which Run builds once for both halves.
func newAutoscaler(o *Options, cfg *rest.Config, sources metricSources, registry compbasemetrics.KubeRegistry,
	kubeInf kubeinformers.SharedInformerFactory) (*autoscaler, error) {
	qps, burst := o.Autoscaler.KubeAPIQPS, o.Autoscaler.KubeAPIBurst
	readCfg := clientsConfig(cfg, qps, burst)
	kube, err := kubernetes.NewForConfig(readCfg)
	if err != nil {
		return nil, fmt.Errorf("build kubernetes client: %w", err)
	}
	scaleClient, err := kubernetes.NewForConfig(clientsConfig(cfg, qps, burst))
	if err != nil {
		return nil, fmt.Errorf("build scale client: %w", err)
	}
	eventClient, err := kubernetes.NewForConfig(clientsConfig(cfg, qps, burst))
	if err != nil {
		return nil, fmt.Errorf("build event client: %w", err)
	}
	pp, err := versioned.NewForConfig(clientsConfig(cfg, -1, 0))
	if err != nil {
		return nil, fmt.Errorf("build podpilot client: %w", err)
	}
	mc, err := metricsclient.NewForConfig(readCfg)
	if err != nil {
		return nil, fmt.Errorf("build metrics.k8s.io client: %w", err)
	}
	a := &autoscaler{
		kube:        kube,
		kubeInf:     kubeInf,
		podpilotInf: externalversions.NewSharedInformerFactory(pp, 0),
		broadcaster: events.NewBroadcaster(&events.EventSinkImpl{Interface: eventClient.EventsV1()}),
		election:    o.LeaderElection,
	}
	if o.Shards > 1 {
		if a.shards, err = newShards(a.election, o.Shards, kube); err != nil {
			return nil, err
		}
	}
	rec, err := controller.NewRecorder(a.broadcaster)
	if err != nil {
		return nil, fmt.Errorf("build event recorder: %w", err)
	}
	m, err := controller.NewMetrics(registry)
	if err != nil {
		return nil, err
	}
	a.ctrl, err = controller.New(controller.Config{
		KubeClient: scaleClient, PodpilotClient: pp, StatusLimiter: flowcontrol.NewTokenBucketRateLimiter(qps, burst),
		KubeInformers: a.kubeInf, PodpilotInformers: a.podpilotInf,
		CustomSource: sources, ExternalSource: sources, SampleTimes: sources, History: providerHistory{sources},
		ResourceSource: metrics.NewResourceMetricsAPI(mc), Recorder: rec,
		Options: *o.Autoscaler, Metrics: m, Ownership: ownership(a.shards),
	})
	if err != nil {
		return nil, fmt.Errorf("build autoscaler: %w", err)
	}
	return a, nil
}

// readyz passes once the autoscaler's informers have synced.
func (a *autoscaler) readyz() healthz.HealthChecker {
	return healthz.NamedCheck("autoscaler-informers", func(*http.Request) error {
		if !a.synced.Load() {
			return errors.New("autoscaler informers not synced")
		}
		return nil
	})
}

// Run starts the informers and event sink, then runs the controller while
// this replica leads, until ctx is done. It stops the controller first, then
// its own informers and the event sink.
func (a *autoscaler) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if err := a.broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("start event sink: %w", err)
	}
	defer a.broadcaster.Shutdown()
	a.kubeInf.Start(ctx.Done())
	a.podpilotInf.Start(ctx.Done())
	// The shared kubeInf is Run's to shut down, once every user has stopped.
	defer a.podpilotInf.Shutdown()
	for typ, ok := range a.kubeInf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("sync %v informer: %w", typ, ctx.Err())
		}
	}
	for typ, ok := range a.podpilotInf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("sync %v informer: %w", typ, ctx.Err())
		}
	}
	a.synced.Store(true)
	switch {
	case !a.election.LeaderElect:
		logger.Info("Leader election off: running the autoscaler")
		return a.runController(ctx)
	case a.shards != nil:
		return a.runSharded(ctx)
	}
	return a.lead(ctx)
}

func (a *autoscaler) runController(ctx context.Context) error {
	if err := a.ctrl.Run(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("run autoscaler: %w", err)
	}
	return nil
}

// identity returns this process's holder identity in the Leases: its host name and a UUID.
func identity() string {
	host, _ := os.Hostname()
	return host + "_" + uuid.NewString()
}

// lead runs the controller whenever this replica holds the Lease, campaigning again after
// losing it, until ctx is done.
func (a *autoscaler) lead(ctx context.Context) error {
	lock, err := resourcelock.New(a.election.ResourceLock, a.election.ResourceNamespace, a.election.ResourceName,
		a.kube.CoreV1(), a.kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity()})
	if err != nil {
		return fmt.Errorf("build leader election lock: %w", err)
	}
	return lead(ctx, a.election, lock, a.runController)
}

// lead campaigns for lock and calls run while it holds it, again after each term, until ctx is
// done. A term ends when the Lease is lost and run has returned: a new campaign starts only
// then, so one replica never runs two terms at once nor holds the Lease while running nothing.
// When run fails while leading, the Lease is released for another replica and lead returns the
// error, so that the process exits, as upstream's controller managers do.
func lead(ctx context.Context, cfg componentbaseconfig.LeaderElectionConfiguration, lock resourcelock.Interface,
	run func(context.Context) error) error {
	for ctx.Err() == nil {
		if err := leadOnce(ctx, cfg, lock, run); err != nil {
			return err
		}
	}
	return nil
}

// leadOnce campaigns once: it returns when ctx is done before the Lease was acquired, or once the
// Lease is lost (or released) and run has returned, with run's error.
func leadOnce(ctx context.Context, cfg componentbaseconfig.LeaderElectionConfiguration, lock resourcelock.Interface,
	run func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	ctx, release := context.WithCancel(ctx) // ending it releases the Lease (ReleaseOnCancel)
	defer release()
	elected := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            "podpilot-autoscaler",
		LeaseDuration:   cfg.LeaseDuration.Duration,
		RenewDeadline:   cfg.RenewDeadline.Duration,
		RetryPeriod:     cfg.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			// Leading is only signalled here: run runs on term's own goroutine, so term knows
			// when it has returned.
			OnStartedLeading: func(leading context.Context) { elected <- leading },
			OnStoppedLeading: func() { logger.Info("Stopped leading", "identity", lock.Identity()) },
		},
	})
	if err != nil {
		return fmt.Errorf("build leader elector: %w", err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		le.Run(ctx)
	}()
	var leading context.Context
	select {
	case <-stopped: // ctx ended before the Lease was acquired
		return nil
	case leading = <-elected:
	}
	logger.Info("Became leader: running the autoscaler", "identity", lock.Identity())
	err = run(leading)
	if err != nil {
		logger.Error(err, "The autoscaler failed while leading: releasing the Lease", "identity", lock.Identity())
		release()
	}
	<-stopped
	return err
}
