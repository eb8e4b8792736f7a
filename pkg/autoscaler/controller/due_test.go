package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	podpilotfake "github.com/podpilot/podpilot/pkg/generated/clientset/versioned/fake"
	"github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
)

func TestARoundIsDueAtTheEarliestTimeItWasQueuedFor(t *testing.T) {
	key := cache.ObjectName{Namespace: "a", Name: "w"}
	cases := []struct {
		name  string
		queue func(q *dueQueue, clk *clocktesting.FakeClock)
		want  time.Duration // after now, when the round runs 20 s after now
	}{
		{"added, due when added", func(q *dueQueue, _ *clocktesting.FakeClock) { q.Add(key) }, 0},
		{"added after a delay, due when the delay ends", func(q *dueQueue, _ *clocktesting.FakeClock) { q.AddAfter(key, 5*time.Second) }, 5 * time.Second},
		{"added after a delay, then added, due when added", func(q *dueQueue, clk *clocktesting.FakeClock) {
			q.AddAfter(key, 15*time.Second)
			clk.Step(2 * time.Second)
			q.Add(key)
		}, 2 * time.Second},
		{"added, then added after a delay, due when first added", func(q *dueQueue, clk *clocktesting.FakeClock) {
			q.Add(key)
			clk.Step(2 * time.Second)
			q.AddAfter(key, 15*time.Second)
		}, 0},
		{"rate limited, due when added", func(q *dueQueue, _ *clocktesting.FakeClock) { q.AddRateLimited(key) }, 0},
		{"never queued, due when it runs", func(*dueQueue, *clocktesting.FakeClock) {}, 20 * time.Second},
		{"due ahead of the clock, due when it runs", func(q *dueQueue, _ *clocktesting.FakeClock) { q.AddAfter(key, time.Minute) }, 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(now)
			q := newDueQueue(workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
				workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Clock: clk}), clk)
			defer q.ShutDown()
			tc.queue(q, clk)
			clk.SetTime(now.Add(20 * time.Second))
			if got := q.takeDue(key).Sub(now); got != tc.want {
				t.Errorf("due %s after now, want %s", got, tc.want)
			}
			if got := q.takeDue(key); !got.Equal(clk.Now()) {
				t.Errorf("taken twice: due %s, want now: the time is forgotten once taken", got)
			}
		})
	}
}

// slowNamespaceReads answers one value per namespace and takes step of the fake clock per call, as
// a Prometheus query does under load.
type slowNamespaceReads struct {
	clock *clocktesting.FakeClock
	step  time.Duration
	mu    sync.Mutex
	calls map[string]int
}

func (s *slowNamespaceReads) GetMetricBySelector(_ context.Context, namespace string, _ labels.Selector, _ provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
	s.mu.Lock()
	s.calls[namespace]++
	s.mu.Unlock()
	s.clock.Step(s.step)
	return &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{{
		DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Namespace: namespace, Name: "p"},
		Timestamp:       metav1.NewTime(s.clock.Now()), Value: resource.MustParse("1"),
	}}}, nil
}

// TestRoundsThatWaitedInTheQueueShareOneReadPerNamespaceAndMetric (issue 34): 40 namespaces of
// 4 PodAutoscalers each on the same metric, queued in turn across the namespaces as they are
// created, each read taking 2 s. A namespace's next PodAutoscaler comes 39 reads (78 s) after
// its first, past the freshness (7.5 s); it takes the answer asked after its round fell due, so
// the pass makes one read per namespace, not one per PodAutoscaler (160).
func TestRoundsThatWaitedInTheQueueShareOneReadPerNamespaceAndMetric(t *testing.T) {
	const namespaces, perNamespace = 40, 4
	var kubeObjs, ppObjs []runtime.Object
	var keys []cache.ObjectName
	for i := range perNamespace {
		for n := range namespaces {
			namespace := fmt.Sprintf("tenant-%02d", n)
			kube, pp := tenantObjects(namespace, perNamespace)
			pa := pp[i].(*podpilotv1alpha1.PodAutoscaler)
			pa.Spec.CustomMetrics[0].MetricName = "qps" // one metric per namespace, shared by its PodAutoscalers
			kubeObjs, ppObjs = append(kubeObjs, kube[i]), append(ppObjs, pa)
			keys = append(keys, cache.ObjectName{Namespace: namespace, Name: pa.Name})
		}
	}
	clk := clocktesting.NewFakeClock(now)
	src := &slowNamespaceReads{clock: clk, step: 2 * time.Second, calls: map[string]int{}}
	kube, pp := kubefake.NewClientset(kubeObjs...), podpilotfake.NewSimpleClientset(ppObjs...)
	kubeInf, ppInf := kubeinformers.NewSharedInformerFactory(kube, 0), externalversions.NewSharedInformerFactory(pp, 0)
	ctrl, err := New(Config{KubeClient: kube, PodpilotClient: pp, KubeInformers: kubeInf, PodpilotInformers: ppInf,
		Recorder: &events.FakeRecorder{}, Clock: clk, Options: *NewOptions(), CustomSource: src})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ppObjs {
		if err := ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range kubeObjs {
		if err := kubeInf.Apps().V1().Deployments().Informer().GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	tm := ctrl.term.Load()
	defer tm.shutDown()
	for _, k := range keys {
		tm.queue.Add(k)
	}
	for range keys { // one worker: the queue's order, one round each
		if !ctrl.processNext(t.Context(), tm) {
			t.Fatal("queue shut down")
		}
	}
	want := map[string]int{}
	for n := range namespaces {
		want[fmt.Sprintf("tenant-%02d", n)] = 1
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if diff := cmp.Diff(want, src.calls); diff != "" {
		t.Errorf("reads per namespace over one pass of %d rounds lasting %s (-want +got):\n%s", len(keys), clk.Since(now), diff)
	}
}
