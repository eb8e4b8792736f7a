package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// settableQPS serves *value for each named pod; a test changes *value between rounds.
func settableQPS(value *string, pods ...string) customFunc {
	return func(ctx context.Context, ns string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		if *value == "" {
			return nil, errProm
		}
		return qpsPerPod(*value, pods...)(ctx, ns, sel, info, msel)
	}
}

// TestRescaleIsOneScaleUpdateOnTheCachedVersionWithoutARead: a term's first round reads the
// target's scale once (see knownHistory); every rescale after it is one update on the cached
// version.
func TestRescaleIsOneScaleUpdateOnTheCachedVersionWithoutARead(t *testing.T) {
	qps := "2000"
	f := newFixture(t, settableQPS(&qps, podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.scaleCalls(); got["update"] != 0 || got["get"] != 1 {
		t.Errorf("scale calls of the term's first round = %v, want one get", got)
	}
	f.clock.Step(DefaultSyncPeriod)
	qps = "3000"
	before := f.statusWrites()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.replicas(""); got != 3 {
		t.Fatalf("replicas = %d, want 3", got)
	}
	if got := f.scaleCalls(); got["update"] != 1 || got["get"] != 1 {
		t.Errorf("scale calls = %v, want one update and no get after the term's first round", got)
	}
	for _, a := range f.kube.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "scale" {
			if rv := u.GetObject().(*autoscalingv1.Scale).ResourceVersion; rv != "1" {
				t.Errorf("scale update carried resourceVersion %q, want the cached deployment's \"1\"", rv)
			}
		}
	}
	if got := f.statusWrites() - before; got != 1 {
		t.Errorf("status writes = %d, want 1 in a round that rescales", got)
	}
}

func TestStaleCacheIsAConflictRetriedSoonAndNeverOverwrites(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	f.seedCaches()
	// Someone scales the deployment to 1 after the cache was read.
	d, err := f.kube.AppsV1().Deployments(ns).Get(t.Context(), "vg1-vanguard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas, d.ResourceVersion = ptr.To[int32](1), "2"
	if err := f.kube.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), d, ns); err != nil {
		t.Fatal(err)
	}
	err = f.ctrl.sync(t.Context(), paKey)
	if !errors.Is(err, errStaleTarget) {
		t.Fatalf("sync = %v, want errStaleTarget for a quick retry", err)
	}
	if got := f.replicas(""); got != 1 {
		t.Errorf("replicas = %d, want 1: a stale decision must not overwrite", got)
	}
	if got := f.statusWrites(); got != 0 {
		t.Errorf("status writes = %d, want 0 for a round decided on stale data", got)
	}
	if reasons, _ := f.events(); len(reasons) != 0 {
		t.Errorf("events = %v, want none", reasons)
	}
	// The retry decides on the fresh cache: from 1 replica, 2 pods at 3000 against 2000 ask for 3.
	f.clock.Step(time.Second)
	if err := f.sync(); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := f.replicas(""); got != 3 {
		t.Errorf("replicas after the retry = %d, want 3", got)
	}
}

func TestStatusIsWrittenOnlyWhenSomethingVisibleChanged(t *testing.T) {
	qps := "2000"
	f := newFixture(t, settableQPS(&qps, podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	rounds := []struct {
		name  string
		qps   string
		write bool
	}{
		{"the first round writes the status", "2000", true},
		{"the same values write nothing", "2000", false},
		{"a metric 2.5% higher writes nothing", "2050", false},
		{"a metric 4.5% above the written value writes nothing", "2090", false},
		{"a metric 7.5% above the written value writes", "2150", true},
		{"a metric back within 5% of the written value writes nothing", "2100", false},
		{"a failing metric writes the condition and <unknown>", "", true},
		{"the same failure again writes nothing", "", false},
		{"the metric back writes", "2000", true},
	}
	for _, r := range rounds {
		before := f.statusWrites()
		qps = r.qps
		if err := f.sync(); err != nil {
			t.Fatalf("%s: sync: %v", r.name, err)
		}
		if got := f.statusWrites() - before; got != map[bool]int{true: 1, false: 0}[r.write] {
			t.Errorf("%s: %d status writes", r.name, got)
		}
		f.clock.Step(DefaultSyncPeriod)
	}
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas = %d, want 2 (every value within the 10%% tolerance)", got)
	}
}

// spentBudget is a status write budget with no tokens left: TryAccept fails and Wait, which
// stands for waiting for the next token, counts its callers.
type spentBudget struct{ waits int }

func (b *spentBudget) TryAccept() bool            { return false }
func (b *spentBudget) Accept()                    { b.waits++ }
func (b *spentBudget) Stop()                      {}
func (b *spentBudget) QPS() float32               { return 0 }
func (b *spentBudget) Wait(context.Context) error { b.waits++; return nil }

func TestSpentStatusBudgetNeverHoldsAWorkerAndDefersOnlyWritesThatRecordNoDecision(t *testing.T) {
	qps := "2000"
	budget := &spentBudget{}
	f := newFixture(t, settableQPS(&qps, podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	f.statusLimiter = budget
	f.restart()
	rounds := []struct {
		name         string
		qps          string
		write, waits int
	}{
		{"a new generation goes to the status writer, which waits for the budget", "2000", 1, 1},
		{"a metric moved by 7.5% alone is deferred to the next round", "2150", 0, 1},
		{"a rescale goes to the status writer, which waits for the budget", "3000", 1, 2},
	}
	for _, r := range rounds {
		before := f.statusWrites()
		qps = r.qps
		if err := f.sync(); err != nil {
			t.Fatalf("%s: sync: %v", r.name, err)
		}
		if got := f.statusWrites() - before; got != 0 || budget.waits != r.waits-r.write {
			t.Errorf("%s: the round itself made %d status writes and %d waits in all, want none of its own", r.name, got, budget.waits)
		}
		if tm := f.ctrl.term.Load(); tm.owed.Len() > 0 {
			f.ctrl.processOwed(t.Context(), tm)
		}
		if got := f.statusWrites() - before; got != r.write || budget.waits != r.waits {
			t.Errorf("%s: %d status writes and %d waits in all, want %d and %d", r.name, got, budget.waits, r.write, r.waits)
		}
		f.clock.Step(DefaultSyncPeriod)
	}
	if got := f.replicas(""); got != 3 {
		t.Errorf("replicas = %d, want 3: the spent status budget never holds back a decision", got)
	}
}
