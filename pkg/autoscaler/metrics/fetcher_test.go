package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

var (
	now      = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)
	errProm  = errors.New("prometheus unavailable")
	qpsValue = custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Name: "vg1-vanguard-0", Namespace: "dns"},
		Timestamp:       metav1.NewTime(now), WindowSeconds: ptr.To[int64](60), Value: resource.MustParse("1500500m"),
	}
)

// customFunc is a CustomSource made of a function, so each test states its behaviour inline.
type customFunc func(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error)

func (f customFunc) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	return f(ctx, namespace, selector, info, metricSelector)
}

// resourceFunc is a ResourceSource made of a function.
type resourceFunc func(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error)

func (f resourceFunc) ListPodMetrics(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error) {
	return f(ctx, namespace)
}

// countingCustom returns the qps value for any request and counts the calls.
func countingCustom(calls *atomic.Int32) customFunc {
	return func(_ context.Context, _ string, selector labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		calls.Add(1)
		if !selector.Empty() || info.GroupResource.Resource != "pods" || !info.Namespaced {
			return nil, errors.New("unexpected request: want all pods of the namespace")
		}
		return &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{qpsValue}}, nil
	}
}

func newTestFetcher(t testing.TB, cfg FetcherConfig) (*Fetcher, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(now)
	cfg.Clock = clk
	f, err := NewFetcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, clk
}

func TestCustomSamplesAreMilliValuesWithTheirOwnTimeAndWindow(t *testing.T) {
	var calls atomic.Int32
	f, _ := newTestFetcher(t, FetcherConfig{Custom: countingCustom(&calls)})
	got, err := f.PodMetric(t.Context(), "dns", "zdns_vanguard_qps", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]replicas.Sample{"vg1-vanguard-0": {Value: 1500500, Timestamp: now, Window: time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func TestCustomCallsAreBatchedPerNamespaceMetricAndSelector(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"view": "internal"})
	tests := []struct {
		name      string
		second    func(*Fetcher, context.Context) error
		advance   time.Duration
		wantCalls int32
	}{
		{name: "two autoscalers in one namespace with the same metric share one call", wantCalls: 1,
			second: func(f *Fetcher, ctx context.Context) error {
				_, err := f.PodMetric(ctx, "dns", "zdns_vanguard_qps", labels.Everything())
				return err
			}},
		{name: "a different metric selector is a separate call", wantCalls: 2,
			second: func(f *Fetcher, ctx context.Context) error {
				_, err := f.PodMetric(ctx, "dns", "zdns_vanguard_qps", sel)
				return err
			}},
		{name: "another namespace is a separate call", wantCalls: 2,
			second: func(f *Fetcher, ctx context.Context) error {
				_, err := f.PodMetric(ctx, "web", "zdns_vanguard_qps", nil)
				return err
			}},
		{name: "a result past its freshness is fetched again", advance: DefaultFreshness, wantCalls: 2,
			second: func(f *Fetcher, ctx context.Context) error {
				_, err := f.PodMetric(ctx, "dns", "zdns_vanguard_qps", nil)
				return err
			}},
		{name: "a result within its freshness is reused", advance: DefaultFreshness - time.Millisecond, wantCalls: 1,
			second: func(f *Fetcher, ctx context.Context) error {
				_, err := f.PodMetric(ctx, "dns", "zdns_vanguard_qps", nil)
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			f, clk := newTestFetcher(t, FetcherConfig{Custom: countingCustom(&calls)})
			if _, err := f.PodMetric(t.Context(), "dns", "zdns_vanguard_qps", nil); err != nil {
				t.Fatal(err)
			}
			clk.Step(tt.advance)
			if err := tt.second(f, t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("source calls = %d, want %d", got, tt.wantCalls)
			}
		})
	}
}

func TestConcurrentCallersShareOneCall(t *testing.T) {
	var calls atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	src := customFunc(func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return &custom_metrics.MetricValueList{Items: []custom_metrics.MetricValue{qpsValue}}, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: src})
	var wg sync.WaitGroup
	results := make([]map[string]replicas.Sample, 4)
	for i := range results {
		wg.Go(func() {
			if i > 0 {
				<-started
			}
			s, err := f.PodMetric(t.Context(), "dns", "zdns_vanguard_qps", nil)
			if err != nil {
				t.Error(err)
			}
			results[i] = s
		})
	}
	<-started
	close(release)
	wg.Wait()
	if got := calls.Load(); got != 1 {
		t.Errorf("source calls = %d, want 1", got)
	}
	for i, r := range results {
		if len(r) != 1 {
			t.Errorf("caller %d got %d samples, want 1", i, len(r))
		}
	}
}

func TestSourceErrorsAreReturnedWrappedNotAsZeros(t *testing.T) {
	src := customFunc(func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
		return nil, errProm
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: src})
	got, err := f.PodMetric(t.Context(), "dns", "zdns_vanguard_qps", nil)
	if !errors.Is(err, errProm) {
		t.Fatalf("err = %v, want %v", err, errProm)
	}
	if got != nil {
		t.Errorf("samples = %v, want nil", got)
	}
	for _, part := range []string{"dns", "zdns_vanguard_qps"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
}

func TestMissingSourceIsErrNoSource(t *testing.T) {
	f, _ := newTestFetcher(t, FetcherConfig{})
	if _, err := f.PodMetric(t.Context(), "dns", "qps", nil); !errors.Is(err, ErrNoSource) {
		t.Errorf("custom err = %v, want ErrNoSource", err)
	}
	if _, err := f.ResourceMetric(t.Context(), "dns", corev1.ResourceCPU); !errors.Is(err, ErrNoSource) {
		t.Errorf("resource err = %v, want ErrNoSource", err)
	}
}

func TestCallerStopsWaitingWhenItsContextEnds(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	src := customFunc(func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
		<-release
		return nil, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Custom: src})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.PodMetric(ctx, "dns", "qps", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestTheFetcherPolicyReusesAnswersForTheFreshnessAndFailuresNever(t *testing.T) {
	var calls atomic.Int32
	fail := true
	src := customFunc(func(ctx context.Context, ns string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		if fail {
			calls.Add(1)
			return nil, errProm
		}
		return countingCustom(&calls)(ctx, ns, sel, info, msel)
	})
	f, clk := newTestFetcher(t, FetcherConfig{Custom: src, Freshness: 5 * time.Second, MaxEntries: 2})
	if got := f.customs.group.Policy(); got.MaxAge != DefaultRetentionRounds*5*time.Second || got.KeepErrors || got.MaxEntries != 2 || got.Timeout != DefaultTimeout {
		t.Errorf("policy = %+v, want the retention, the bound, the default timeout and no reuse of failures", got)
	}
	if _, err := f.PodMetric(t.Context(), "dns", "qps", nil); !errors.Is(err, errProm) {
		t.Fatalf("first read = %v, want the failure", err)
	}
	fail = false
	clk.Step(time.Second)
	if _, err := f.PodMetric(t.Context(), "dns", "qps", nil); err != nil {
		t.Errorf("read after a failure = %v, want a new call", err)
	}
	clk.Step(time.Second)
	if _, err := f.PodMetric(t.Context(), "dns", "qps", nil); err != nil || calls.Load() != 2 {
		t.Errorf("read within the freshness: %v after %d calls, want the answer reused (2 calls)", err, calls.Load())
	}
}

func podMetrics(name string, usages ...corev1.ResourceList) metricsv1beta1.PodMetrics {
	pm := metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "dns"},
		Timestamp:  metav1.NewTime(now), Window: metav1.Duration{Duration: 30 * time.Second},
	}
	for i, u := range usages {
		pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: string(rune('a' + i)), Usage: u})
	}
	return pm
}

func TestResourceSamplesSumContainersAndOneListServesCPUAndMemory(t *testing.T) {
	list := &metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{
		podMetrics("p0",
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("20Mi")}),
		podMetrics("p1-no-memory-in-one-container",
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("1Mi")},
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}),
	}}
	var calls atomic.Int32
	src := resourceFunc(func(_ context.Context, ns string) (*metricsv1beta1.PodMetricsList, error) {
		calls.Add(1)
		return list, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Resource: src})
	cpu, err := f.ResourceMetric(t.Context(), "dns", corev1.ResourceCPU)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := f.ResourceMetric(t.Context(), "dns", corev1.ResourceMemory)
	if err != nil {
		t.Fatal(err)
	}
	at := func(v int64) replicas.Sample {
		return replicas.Sample{Value: v, Timestamp: now, Window: 30 * time.Second}
	}
	wantCPU := map[string]replicas.Sample{"p0": at(250), "p1-no-memory-in-one-container": at(1200)}
	wantMem := map[string]replicas.Sample{"p0": at(120 << 20 * 1000)}
	if diff := cmp.Diff(wantCPU, cpu); diff != "" {
		t.Errorf("cpu (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMem, mem); diff != "" {
		t.Errorf("memory (-want +got):\n%s", diff)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("pod metrics lists = %d, want 1", got)
	}
}

func TestResourceMetricsAPIListsPodMetricsOfTheNamespace(t *testing.T) {
	client := metricsfake.NewSimpleClientset()
	client.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != "dns" {
			return true, &metricsv1beta1.PodMetricsList{}, nil
		}
		return true, &metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{podMetrics("p0",
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")})}}, nil
	})
	f, _ := newTestFetcher(t, FetcherConfig{Resource: NewResourceMetricsAPI(client)})
	cpu, err := f.ResourceMetric(t.Context(), "dns", corev1.ResourceCPU)
	if err != nil {
		t.Fatal(err)
	}
	if got := cpu["p0"].Value; got != 100 {
		t.Errorf("p0 cpu = %d, want 100", got)
	}
}

func TestAnErrorQuotesALongSelectorByItsEnds(t *testing.T) {
	long := "queue in (" + strings.Repeat("v0123456789,", 20000) + "jobs)"
	tests := []struct {
		name, selector string
		want           []string
		maxLen         int
	}{
		{name: "a short selector is quoted whole", selector: "queue=jobs", want: []string{"queue=jobs"}, maxLen: 10},
		{name: "a long selector keeps its two ends and says how much is left out", selector: long,
			want: []string{"queue in (v0123", "jobs)", fmt.Sprintf("…(%d bytes)…", len(long)-maxSelectorText)}, maxLen: maxSelectorText + 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := selectorText(tt.selector)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("selectorText = %q, want it to contain %q", got, w)
				}
			}
			if len(got) > tt.maxLen {
				t.Errorf("selectorText is %d bytes, want at most %d", len(got), tt.maxLen)
			}
		})
	}
}
