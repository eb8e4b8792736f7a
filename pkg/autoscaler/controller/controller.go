package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/autoscaler/schedule"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
	podpilotlisters "github.com/podpilot/podpilot/pkg/generated/listers/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// Name is the controller's name in events, logs and the work queue's metrics.
const Name = "podpilot-autoscaler"

var (
	// ErrCacheSync means the informer caches did not sync before the context ended.
	ErrCacheSync = errors.New("informer caches did not sync")
	// ErrAlreadyRunning means Run was called while another Run of the same controller was active.
	ErrAlreadyRunning = errors.New("autoscaler is already running")
	// ErrInvalidConfig means a required Config field is missing or the options are invalid.
	ErrInvalidConfig = errors.New("invalid autoscaler config")
)

// Config is everything New needs. The informer factories are owned by the caller: New only
// requests the informers it needs, and the caller starts the factories (before or after Run, on
// every replica so that readiness can wait for them) and stops them after Run returns.
type Config struct {
	// KubeClient writes the scale subresource of the targets; give it a rate limiter of its own,
	// so that decisions never wait behind other calls.
	KubeClient kubernetes.Interface
	// PodpilotClient writes the PodAutoscalers' status. Leave its own rate limiting off and set
	// StatusLimiter instead.
	PodpilotClient versioned.Interface
	// StatusLimiter is the budget of status writes; nil means unlimited. A write that records a
	// rescale, a new recommendation or a new generation waits for it; any other is deferred to the
	// next round when the budget is spent.
	StatusLimiter flowcontrol.RateLimiter
	// KubeInformers provides the Pod, Deployment, StatefulSet, ReplicaSet and
	// HorizontalPodAutoscaler (autoscaling/v2) informers.
	KubeInformers kubeinformers.SharedInformerFactory
	// PodpilotInformers provides the PodAutoscaler informer.
	PodpilotInformers externalversions.SharedInformerFactory
	// CustomSource serves custom metrics, e.g. podpilot's Prometheus provider; nil makes custom
	// metrics fail (and so never scale down).
	CustomSource metrics.CustomSource
	// ResourceSource serves cpu and memory, e.g. metrics.NewResourceMetricsAPI; nil makes resource
	// and container resource metrics fail.
	ResourceSource metrics.ResourceSource
	// ExternalSource serves external metrics, e.g. podpilot's Prometheus provider; nil makes
	// external metrics fail. Object metrics are read from CustomSource.
	ExternalSource metrics.ExternalSource
	// SampleTimes tells when the data behind a pods metric lands, e.g. podpilot's Prometheus
	// provider; nil (or Options.AlignToScrapes off) keeps rounds on a fixed period.
	SampleTimes metrics.SampleTimeSource
	// History serves the metrics' past values for the forecast of PodAutoscalers with
	// spec.prediction, e.g. podpilot's Prometheus provider; nil turns the forecast off
	// (PredictionActive False, HistoryUnavailable).
	History metrics.HistorySource
	// Recorder records events on PodAutoscalers; see NewRecorder.
	Recorder events.EventRecorder
	// Clock is the time of every round and of the work queue; nil means the real clock.
	Clock clock.WithTicker
	// Options are the autoscaler's settings; they must be valid.
	Options Options
	// Metrics records the autoscaler's own metrics (see NewMetrics); nil records none.
	Metrics *Metrics
	// Ownership says which PodAutoscalers this replica runs when the autoscaler is sharded; nil
	// runs every one.
	Ownership Ownership
}

// Controller syncs every PodAutoscaler each sync period. While it runs (leads), it keeps each
// PodAutoscaler's history in memory and checkpoints it in the object's status (see state.Memory).
type Controller struct {
	kube     kubernetes.Interface
	podpilot versioned.Interface
	statusRL flowcontrol.RateLimiter
	recorder events.EventRecorder
	clock    clock.WithTicker
	opts     Options
	fetcher  *metrics.Fetcher
	scrapes  *metrics.ScrapeTracker
	models   *prediction.Models
	metrics  *Metrics
	owner    Ownership

	paInformer        cache.SharedIndexInformer
	paLister          podpilotlisters.PodAutoscalerLister
	paIndexer         cache.Indexer
	podLister         podcache.Lister
	podIndexer        cache.Indexer
	deploymentLister  appslisters.DeploymentLister
	statefulSetLister appslisters.StatefulSetLister
	replicaSetLister  appslisters.ReplicaSetLister
	replicaSetIndexer cache.Indexer
	hpaIndexer        cache.Indexer
	hpaInformer       cache.SharedIndexInformer
	synced            []cache.InformerSynced

	// term is the current Run's queues and memory; New sets one up for syncs without Run.
	term     atomic.Pointer[term]
	running  atomic.Bool
	active   atomic.Int32
	lastTick atomic.Int64
}

// term is what one Run (one term as leader) owns: its work queue, the queue of status writes the
// status budget deferred, its memory of the PodAutoscalers and the fair share of its workers.
type term struct {
	queue  roundQueue
	owed   workqueue.TypedRateLimitingInterface[cache.ObjectName]
	memory *state.Memory[concerns]
	fair   *fairShare
}

// newTerm returns a term with new queues timed by clk, an empty memory and a fair share of workers.
func newTerm(clk clock.WithTicker, o Options) *term {
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[cache.ObjectName] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, o.SyncPeriod),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: name, Clock: clk},
		)
	}
	return &term{queue: newDueQueue(newQueue(Name), clk), owed: newQueue(Name + "-status"), memory: state.New[concerns](), fair: newFairShare(o.namespaceShare())}
}

// shutDown stops t's queues.
func (t *term) shutDown() {
	t.queue.ShutDown()
	t.owed.ShutDown()
}

// New returns a Controller for cfg; it registers its informers with the factories.
func New(cfg Config) (*Controller, error) {
	if cfg.KubeClient == nil || cfg.PodpilotClient == nil || cfg.KubeInformers == nil || cfg.PodpilotInformers == nil || cfg.Recorder == nil {
		return nil, fmt.Errorf("clients, informer factories and recorder are required: %w", ErrInvalidConfig)
	}
	if errs := cfg.Options.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	fetcher, err := metrics.NewFetcher(metrics.FetcherConfig{
		Custom: cfg.CustomSource, Resource: cfg.ResourceSource, External: cfg.ExternalSource, Clock: cfg.Clock,
		Freshness: cfg.Options.SyncPeriod / 2, Timeout: cfg.Options.SyncPeriod, Counter: cfg.Metrics.Counter(),
	})
	if err != nil {
		return nil, fmt.Errorf("build metrics fetcher: %w", err)
	}
	scrapes, err := newScrapeTracker(cfg)
	if err != nil {
		return nil, err
	}
	fits, err := prediction.NewModels(cfg.History, cfg.Clock, cfg.Options.PredictionRefresh, cfg.Options.PredictionMaxModels, cfg.Metrics.ModelCache)
	if err != nil {
		return nil, err
	}
	pas := cfg.PodpilotInformers.Autoscaling().V1alpha1().PodAutoscalers()
	pods := cfg.KubeInformers.Core().V1().Pods()
	deployments := cfg.KubeInformers.Apps().V1().Deployments()
	statefulSets := cfg.KubeInformers.Apps().V1().StatefulSets()
	replicaSets := cfg.KubeInformers.Apps().V1().ReplicaSets()
	hpas := cfg.KubeInformers.Autoscaling().V2().HorizontalPodAutoscalers()
	if err := errors.Join(addPodLabelIndex(pods.Informer()), addIndex(replicaSets.Informer(), controllerUIDIndex, controllerUIDIndexFunc),
		addIndex(hpas.Informer(), scaleTargetIndex, hpaScaleTargetIndexFunc), addIndex(pas.Informer(), scaleTargetIndex, paScaleTargetIndexFunc)); err != nil {
		return nil, fmt.Errorf("index the informers: %w", err)
	}
	c := &Controller{
		kube: cfg.KubeClient, podpilot: cfg.PodpilotClient, statusRL: cfg.StatusLimiter, recorder: cfg.Recorder, clock: cfg.Clock,
		opts: cfg.Options, fetcher: fetcher, scrapes: scrapes, models: fits, metrics: cfg.Metrics, owner: cfg.Ownership,
		paInformer: pas.Informer(), paLister: pas.Lister(), paIndexer: pas.Informer().GetIndexer(),
		podLister: podcache.NewLister(pods.Informer().GetIndexer()), podIndexer: pods.Informer().GetIndexer(),
		deploymentLister: deployments.Lister(), statefulSetLister: statefulSets.Lister(),
		replicaSetLister: replicaSets.Lister(), replicaSetIndexer: replicaSets.Informer().GetIndexer(),
		hpaIndexer: hpas.Informer().GetIndexer(), hpaInformer: hpas.Informer(),
		synced: []cache.InformerSynced{pas.Informer().HasSynced, pods.Informer().HasSynced,
			deployments.Informer().HasSynced, statefulSets.Informer().HasSynced,
			replicaSets.Informer().HasSynced, hpas.Informer().HasSynced},
	}
	owns := func(namespace, name string) bool { return c.owns(cache.ObjectName{Namespace: namespace, Name: name}) }
	if err := cfg.Metrics.Watch(c.paLister, c.running.Load, owns, cfg.Options.SyncPeriod, cfg.Options.PerObjectMetrics); err != nil {
		return nil, err
	}
	c.term.Store(newTerm(c.clock, c.opts))
	return c, nil
}

// Run syncs PodAutoscalers with the configured workers until ctx is done, then shuts its queues
// down and waits for the workers. Call it once leadership is acquired; it may be called again
// after it returns, and each Run starts from the PodAutoscalers' status (see state.Memory). It fails
// if the caches do not sync.
func (c *Controller) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer c.running.Store(false)
	logger := klog.FromContext(ctx)
	tm := newTerm(c.clock, c.opts)
	c.term.Store(tm)
	defer tm.shutDown()

	reg, err := c.paInformer.AddEventHandlerWithOptions(handler(tm, c.owns), cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return fmt.Errorf("add PodAutoscaler event handler: %w", err)
	}
	defer func() {
		if err := c.paInformer.RemoveEventHandler(reg); err != nil {
			logger.Error(err, "Removing PodAutoscaler event handler")
		}
	}()
	hpaReg, err := c.hpaInformer.AddEventHandlerWithOptions(hpaHandler(tm, c.paIndexer, c.owns), cache.HandlerOptions{Logger: &logger})
	if err != nil {
		return fmt.Errorf("add HorizontalPodAutoscaler event handler: %w", err)
	}
	defer func() {
		if err := c.hpaInformer.RemoveEventHandler(hpaReg); err != nil {
			logger.Error(err, "Removing HorizontalPodAutoscaler event handler")
		}
	}()
	logger.Info("Starting autoscaler", "workers", c.opts.Workers, "syncPeriod", c.opts.SyncPeriod)
	c.tick()
	if !cache.WaitForNamedCacheSyncWithContext(ctx, append(c.synced, reg.HasSynced)...) {
		return fmt.Errorf("%s: %w", Name, ErrCacheSync)
	}
	c.tick()

	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for c.processNext(ctx, tm) {
				}
			}, time.Second)
		})
	}
	wg.Go(func() {
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processOwed(ctx, tm) {
			}
		}, time.Second)
	})
	wg.Go(func() { c.heartbeat(ctx, tm.queue) })
	<-ctx.Done()
	logger.Info("Stopping autoscaler")
	tm.shutDown()
	wg.Wait()
	if c.scrapes != nil {
		c.scrapes.Wait()
	}
	return nil
}

// handler enqueues a PodAutoscaler this replica owns when it appears and when its spec
// (generation) changes; status updates do not enqueue, the periodic resync covers them. A
// deleted PodAutoscaler is forgotten.
func handler(tm *term, owns func(cache.ObjectName) bool) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		key, err := cache.ObjectToName(obj)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("key of PodAutoscaler %T: %w", obj, err))
			return
		}
		if owns(key) {
			tm.queue.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(metav1.Object)
			n, okNew := newObj.(metav1.Object)
			if okOld && okNew && o.GetGeneration() == n.GetGeneration() {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: func(obj any) { state.ForgetObject(tm.memory, obj) },
	}
}

// hpaHandler queues the PodAutoscalers of a deleted HorizontalPodAutoscaler's scale target at
// once: one that refused to scale beside it (AmbiguousScaleTarget) takes over in its next round,
// not a sync period later, which is what `podpilot migrate --apply` relies on when it deletes an
// HPA and then turns its PodAutoscaler's dryRun off.
func hpaHandler(tm *term, paIndexer cache.Indexer, owns func(cache.ObjectName) bool) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		keys, _ := hpaScaleTargetIndexFunc(obj)
		for _, key := range keys {
			pas, err := paIndexer.ByIndex(scaleTargetIndex, key)
			if err != nil {
				utilruntime.HandleError(fmt.Errorf("look up the PodAutoscalers of %s: %w", key, err))
				continue
			}
			for _, pa := range pas {
				if name, err := cache.ObjectToName(pa); err == nil && owns(name) {
					tm.queue.Add(name)
				}
			}
		}
	}}
}

// processNext syncs the next PodAutoscaler of the queue, or parks it while its namespace has its
// fair share of workers (see fairShare); after each sync it goes on with a PodAutoscaler parked
// in the same namespace, if any. It returns false when the queue is shut down.
func (c *Controller) processNext(ctx context.Context, tm *term) bool {
	key, shutdown := tm.queue.Get()
	if shutdown {
		return false
	}
	if !tm.fair.admit(key) {
		return true
	}
	for ok := true; ok; key, ok = tm.fair.done(key) {
		c.syncAndRequeue(ctx, tm, key)
	}
	return true
}

// syncAndRequeue syncs key and re-adds it: for its next round (see nextRound) after a sync that
// succeeded, whose rescale failed (errRescaleFailed: it may have landed, and a refused one is
// not retried sooner than a round), or whose decision was applied but not checkpointed
// (errStatusNotWritten: the status is written again at the next round, which never comes sooner
// after a rescale); soon, rate limited, after any other error, where no scale was written, and
// after a round that panicked (see syncRecovering). The round runs under its claim (see claim);
// the check of its metric's landings that nextRound may start runs under the term's ctx, so
// that it is not cut off when the round ends before Prometheus answers (sharded, the claim's
// context ends with the round). The round reads its metrics as of when it fell due (see
// dueQueue), however long it waited in the queue.
func (c *Controller) syncAndRequeue(termCtx context.Context, tm *term, key cache.ObjectName) {
	defer tm.queue.Done(key)
	due := tm.queue.takeDue(key)
	ctx, release, owned := c.claim(termCtx, key)
	if !owned { // another replica runs it (sharded): dropped until its bucket is adopted again
		tm.queue.Forget(key)
		return
	}
	defer release()
	c.active.Add(1)
	c.metrics.SyncStarted(c.clock.Now(), tm.queue.Len())
	err := c.syncRecovering(metrics.WithRoundDue(ctx, due), tm, key)
	c.metrics.SyncDone(c.clock.Now(), tm.queue.Len())
	c.active.Add(-1)
	c.tick()
	if ctx.Err() != nil && c.owner != nil && !c.owns(key) { // the bucket was lost during the round
		tm.queue.Forget(key)
		return
	}
	switch {
	case errors.Is(err, errStaleTarget):
		klog.FromContext(ctx).V(2).Info("Scale target changed since the cache was read, retrying", "podAutoscaler", klog.KRef(key.Namespace, key.Name), "err", err)
		tm.queue.AddRateLimited(key)
		return
	case errors.Is(err, errRescaleFailed):
		utilruntime.HandleErrorWithContext(ctx, err, "Rescale failed, deciding again at the next round", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
	case errors.Is(err, errStatusNotWritten):
		utilruntime.HandleErrorWithContext(ctx, err, "PodAutoscaler status not written, writing it at the next round", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
	case err != nil:
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing PodAutoscaler failed, requeuing", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
		tm.queue.AddRateLimited(key)
		return
	}
	tm.queue.Forget(key)
	if pa, err := c.paLister.PodAutoscalers(key.Namespace).Get(key.Name); !apierrors.IsNotFound(err) {
		next := c.nextRound(termCtx, pa)
		if pa != nil {
			if w := schedule.UntilWindowChange(pa, c.clock.Now()); w > 0 {
				next = min(next, w) // a schedule window starts or ends before the next round (see schedule.UntilWindowChange)
			}
			next = max(next, rescaleGap(pa)-c.clock.Since(state.LastRescale(tm.memory, key)))
		}
		tm.queue.AddAfter(key, next)
	}
}

// rescaleGap is the shortest time between two rescales of pa: its longest policy period over
// the scale events a status holds (MaxScaleEvents), so that the status always holds every event
// a policy still counts (3.6 s for the longest period the CRD accepts, 1800 s; 30 ms for the
// default 15 s).
func rescaleGap(pa *podpilotv1alpha1.PodAutoscaler) time.Duration {
	return normalize.LongestPeriod(specconv.Behavior(pa.Spec.Behavior)) / podpilotv1alpha1.MaxScaleEvents
}

// heartbeat ticks every sync period while no work is queued or in progress, so that an idle
// autoscaler stays live and a stuck one does not.
func (c *Controller) heartbeat(ctx context.Context, queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) {
	ticker := c.clock.NewTicker(c.opts.SyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			if queue.Len() == 0 && c.active.Load() == 0 {
				c.tick()
			}
		}
	}
}

func (c *Controller) tick() { c.lastTick.Store(c.clock.Now().UnixNano()) }

// LastTick returns when the loop last made progress; zero before the first Run.
func (c *Controller) LastTick() time.Time {
	if t := c.lastTick.Load(); t != 0 {
		return time.Unix(0, t)
	}
	return time.Time{}
}

// Healthz returns the autoscaler's liveness check: it fails while Run is active and the loop has
// made no progress (no sync ended, no idle heartbeat) for livenessLimit. A round has one
// deadline (Options.roundTimeout), so a slow or hung metric source makes rounds fail their
// metrics, never stop the loop: the check never fails because a dependency is slow. It passes
// while Run is not active (e.g. without leadership).
func (c *Controller) Healthz() healthz.HealthChecker {
	return healthz.NamedCheck("autoscaler", func(*http.Request) error {
		if !c.running.Load() {
			return nil
		}
		since := c.clock.Since(c.LastTick())
		if limit := c.opts.livenessLimit(); since > limit {
			return fmt.Errorf("autoscaler loop has made no progress for %s (limit %s)", since.Round(time.Millisecond), limit)
		}
		return nil
	})
}
