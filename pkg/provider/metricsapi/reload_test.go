package metricsapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// gaugeRules serves per-pod gauges; queueRules only queue_depth, under another name.
const (
	gaugeRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	queueRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  seriesFilters:
  - is: ^queue_depth$
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name:
    as: backlog
  metricsQuery: max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	badRules = `rules:
- seriesQuery: ''
  name:
    matches: '('
  metricsQuery: sum(<<.Series>>)
`
)

func reloadSeries() map[string][]model.LabelSet {
	return map[string][]model.LabelSet{podsQuery: {
		labelSet("queue_depth", "namespace", "ns", "pod", "p1"),
		labelSet("temperature", "namespace", "ns", "pod", "p1"),
	}}
}

func customNames(p *Provider) []string {
	var out []string
	for _, info := range p.ListAllMetrics() {
		out = append(out, info.String())
	}
	return out
}

func TestReload(t *testing.T) {
	path := rulesFile(t, gaugeRules)
	p, _ := testProvider(t, &fakeProm{series: reloadSeries()}, path)
	p.refresh(t.Context())
	allGauges := []string{"namespaces/queue_depth", "pods/queue_depth(namespaced)", "namespaces/temperature", "pods/temperature(namespaced)"}
	if diff := cmp.Diff(allGauges, customNames(p)); diff != "" {
		t.Fatalf("initial metrics (-want +got):\n%s", diff)
	}

	t.Run("an unchanged file is not reloaded", func(t *testing.T) {
		if p.reload(t.Context(), reloadTrigger) {
			t.Error("reload reported new rules for an unchanged file")
		}
	})
	t.Run("a bad file is counted and the last good rules keep serving", func(t *testing.T) {
		writeFile(t, path, badRules)
		if p.reload(t.Context(), reloadTrigger) {
			t.Fatal("reload accepted a bad file")
		}
		p.refresh(t.Context())
		if diff := cmp.Diff(allGauges, customNames(p)); diff != "" {
			t.Errorf("metrics after a bad file (-want +got):\n%s", diff)
		}
		if got := counterValue(t, p.metrics.reloads, reloadTrigger, resultFailure); got != 1 {
			t.Errorf("failed reloads = %v, want 1", got)
		}
		if p.reload(t.Context(), reloadTrigger) {
			t.Error("the same bad file was reloaded again")
		}
		if got := counterValue(t, p.metrics.reloads, reloadTrigger, resultFailure); got != 1 {
			t.Errorf("failed reloads after polling the same bad file = %v, want 1 (reported once)", got)
		}
	})
	t.Run("a good file replaces the rules", func(t *testing.T) {
		writeFile(t, path, queueRules)
		if !p.reload(t.Context(), reloadTrigger) {
			t.Fatal("reload rejected a good file")
		}
		p.refresh(t.Context())
		want := []string{"namespaces/backlog", "pods/backlog(namespaced)"}
		if diff := cmp.Diff(want, customNames(p)); diff != "" {
			t.Errorf("metrics after reload (-want +got):\n%s", diff)
		}
		if got := counterValue(t, p.metrics.reloads, reloadTrigger, resultSuccess); got != 1 {
			t.Errorf("successful reloads = %v, want 1", got)
		}
	})
}

func TestReloadFollowsConfigMapSymlinkSwap(t *testing.T) {
	// A ConfigMap volume: rules.yaml -> ..data/rules.yaml, ..data -> ..v1, swapped atomically.
	dir := t.TempDir()
	for v, content := range map[string]string{"..v1": gaugeRules, "..v2": queueRules} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, v, "rules.yaml"), content)
	}
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yaml")
	if err := os.Symlink(filepath.Join("..data", "rules.yaml"), path); err != nil {
		t.Fatal(err)
	}
	p, _ := testProvider(t, &fakeProm{series: reloadSeries()}, path)

	if err := os.Symlink("..v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if !p.reload(t.Context(), reloadTrigger) {
		t.Fatal("the swapped ConfigMap content was not reloaded")
	}
	p.refresh(t.Context())
	if diff := cmp.Diff([]string{"namespaces/backlog", "pods/backlog(namespaced)"}, customNames(p)); diff != "" {
		t.Errorf("metrics after the swap (-want +got):\n%s", diff)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{
			name:   "a bad rule file fails start with its field errors",
			mutate: func(c *Config) { c.RulesFile = rulesFile(t, badRules) },
			want:   []string{"rules[0].seriesQuery", "rules[0].name.matches"},
		},
		{
			name:   "every missing dependency is named",
			mutate: func(c *Config) { c.Informers, c.Prometheus = nil, nil },
			want:   []string{"informers are required", "prometheus client is required"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{
				Options:    *NewOptions(),
				Prometheus: &fakeProm{},
				Mapper:     rules.StaticMapper(),
				Informers:  metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(fake.NewTestScheme()), 0),
				Registry:   metrics.NewKubeRegistry(),
			}
			tt.mutate(&cfg)
			_, err := New(cfg)
			if err == nil {
				t.Fatal("New accepted a bad config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// runLoop runs p.Run on a fake clock with a reload trigger until the test ends, and waits for
// the first discovery pass.
type runLoop struct {
	clock  *testingclock.FakeClock
	reload chan struct{}
	cancel context.CancelFunc
	done   chan error
}

func startRunLoop(t *testing.T, prom *fakeProm, path string) (*Provider, *runLoop) {
	t.Helper()
	l := &runLoop{clock: testingclock.NewFakeClock(testNow), reload: make(chan struct{}), done: make(chan error, 1)}
	p, err := New(Config{
		Options:    Options{RulesFile: path, DiscoveryInterval: DefaultDiscoveryInterval, SeriesMaxAge: DefaultSeriesMaxAge},
		Prometheus: prom,
		Mapper:     rules.StaticMapper(),
		Informers:  metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(fake.NewTestScheme()), 0),
		Registry:   metrics.NewKubeRegistry(),
		Reload:     l.reload,
		Clock:      l.clock,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	l.cancel = cancel
	go func() { l.done <- p.Run(ctx) }()
	t.Cleanup(cancel)
	hc := p.HealthChecker()
	err = wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return hc.Check(nil) == nil, nil
	})
	if err != nil {
		t.Fatalf("provider never became ready: %v", err)
	}
	return p, l
}

// waitFor polls cond for up to 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestRunRediscoversOnTheInjectedClock(t *testing.T) {
	prom := &fakeProm{series: reloadSeries()}
	_, l := startRunLoop(t, prom, "")
	first := prom.seriesCalls.Load()
	// Nothing happens until the fake clock reaches the relist interval.
	waitFor(t, "the relist ticker waits on the fake clock", l.clock.HasWaiters)
	l.clock.Step(DefaultDiscoveryInterval - time.Second)
	if got := prom.seriesCalls.Load(); got != first {
		t.Fatalf("series calls before the interval = %d, want %d", got, first)
	}
	l.clock.Step(time.Second)
	waitFor(t, "a relist pass one interval later", func() bool { return prom.seriesCalls.Load() > first })
}

func TestRunReloadsOnTriggerAndFileChangeAndStopsWithContext(t *testing.T) {
	path := rulesFile(t, gaugeRules)
	p, l := startRunLoop(t, &fakeProm{series: reloadSeries()}, path)

	writeFile(t, path, queueRules)
	l.reload <- struct{}{}
	waitFor(t, "rules reloaded on the reload trigger", func() bool {
		names := customNames(p)
		return len(names) == 2 && names[0] == "namespaces/backlog"
	})

	writeFile(t, path, gaugeRules)
	waitFor(t, "the poll ticker waits on the fake clock", l.clock.HasWaiters)
	l.clock.Step(rulesPollInterval)
	waitFor(t, "rules reloaded when the file changed, on the fake clock's poll", func() bool {
		names := customNames(p)
		return len(names) > 0 && names[0] != "namespaces/backlog"
	})

	l.cancel()
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}
