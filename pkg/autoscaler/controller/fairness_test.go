package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	podpilotfake "github.com/podpilot/podpilot/pkg/generated/clientset/versioned/fake"
	"github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
)

func TestFairShareParksANamespaceAtItsCapAndHandsItsKeysOnInOrder(t *testing.T) {
	f := newFairShare(2)
	a := func(n string) cache.ObjectName { return cache.ObjectName{Namespace: "a", Name: n} }
	b := cache.ObjectName{Namespace: "b", Name: "x"}
	var admitted []string
	for _, k := range []cache.ObjectName{a("1"), a("2"), a("3"), b, a("4")} {
		if f.admit(k) {
			admitted = append(admitted, k.String())
		}
	}
	if diff := cmp.Diff([]string{"a/1", "a/2", "b/x"}, admitted); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
	var next []string
	for k, ok := f.done(a("1")); ok; k, ok = f.done(k) {
		next = append(next, k.String())
	}
	if diff := cmp.Diff([]string{"a/3", "a/4"}, next); diff != "" {
		t.Errorf("a sync of namespace a that ends hands on its parked keys in order (-want +got):\n%s", diff)
	}
	if !f.admit(a("5")) {
		t.Error("namespace a below its cap again refused a key")
	}
}

// namespaceRounds times the reads of a custom metric per namespace: reads in slowNamespace take
// delay, the others return at once.
type namespaceRounds struct {
	slowNamespace string
	delay         time.Duration
	mu            sync.Mutex
	reads         map[string][]time.Time
}

func (n *namespaceRounds) GetMetricBySelector(ctx context.Context, namespace string, _ labels.Selector, _ provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
	n.mu.Lock()
	n.reads[namespace] = append(n.reads[namespace], time.Now())
	n.mu.Unlock()
	if namespace == n.slowNamespace {
		select {
		case <-time.After(n.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{{
		DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Namespace: namespace, Name: "p"},
		Timestamp:       metav1.Now(), Value: resource.MustParse("1"),
	}}}, nil
}

// tenantObjects are n PodAutoscalers in namespace, each on a Deployment of its own and reading a
// metric of its own (so nothing is shared between them).
func tenantObjects(namespace string, n int) (kube, pp []runtime.Object) {
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		kube = append(kube, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("d-" + namespace + name), ResourceVersion: "1"},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
		})
		pp = append(pp, &podpilotv1alpha1.PodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("p-" + namespace + name), Generation: 1},
			Spec: podpilotv1alpha1.PodAutoscalerSpec{
				ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: name, MaxReplicas: 5,
				CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "qps_" + name, AverageValue: resource.MustParse("1")}},
			},
		})
	}
	return kube, pp
}

// TestFaultOneNamespaceOfSlowRoundsLeavesOtherNamespacesOnTime (issue 21): 1,000
// PodAutoscalers in one namespace, each on a metric of its own that takes 200 ms to read, and
// one PodAutoscaler in another namespace. With a fair share of the workers per namespace the
// other namespace's rounds keep their sync period; without it (the base commit) they wait
// behind the slow namespace's queue, about 1000 × 200 ms / 16 workers = 12.5 s. The figure is
// printed; the timing is asserted only under the faults build tag (make test-faults).
func TestFaultOneNamespaceOfSlowRoundsLeavesOtherNamespacesOnTime(t *testing.T) {
	const period, watch = time.Second, 6 * time.Second
	kubeA, ppA := tenantObjects("tenant-a", 1000)
	kubeB, ppB := tenantObjects("tenant-b", 1)
	kube := kubefake.NewClientset(append(kubeA, kubeB...)...)
	pp := podpilotfake.NewSimpleClientset(append(ppA, ppB...)...)
	src := &namespaceRounds{slowNamespace: "tenant-a", delay: 200 * time.Millisecond, reads: map[string][]time.Time{}}
	kubeInf := kubeinformers.NewSharedInformerFactory(kube, 0)
	ppInf := externalversions.NewSharedInformerFactory(pp, 0)
	opts := *NewOptions()
	opts.SyncPeriod = period
	// A status budget of 5 writes per second keeps the fake clientset's watches (100 events
	// deep) from overflowing; the rounds never wait for it.
	ctrl, err := New(Config{KubeClient: kube, PodpilotClient: pp, KubeInformers: kubeInf, PodpilotInformers: ppInf,
		Recorder: &events.FakeRecorder{}, Clock: clock.RealClock{}, Options: opts, CustomSource: src,
		StatusLimiter: flowcontrol.NewTokenBucketRateLimiter(5, 5)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	kubeInf.Start(ctx.Done())
	ppInf.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	time.Sleep(watch) // a figure over a fixed stretch of rounds, not a wait for a condition
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	kubeInf.Shutdown()
	ppInf.Shutdown()

	src.mu.Lock()
	b, a := slices.Clone(src.reads["tenant-b"]), len(src.reads["tenant-a"])
	src.mu.Unlock()
	var worst time.Duration
	for i := 1; i < len(b); i++ {
		worst = max(worst, b[i].Sub(b[i-1]))
	}
	fmt.Printf("FIGURE namespace-fairness: tenant-b read %d times in %s, longest gap %s (sync period %s), while tenant-a's 1,000 slow PodAutoscalers made %d reads\n",
		len(b), watch, worst.Round(time.Millisecond), period, a)
	checkTiming(t, len(b) >= int(watch/period)-2 && worst <= period+500*time.Millisecond,
		"tenant-b read %d times in %s with a longest gap of %s, promised every sync period (%s)", len(b), watch, worst, period)
}
