package metricsapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/component-base/metrics"

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
			mutate: func(c *Config) { c.Metadata, c.Prometheus = nil, nil },
			want:   []string{"metadata client is required", "prometheus client is required"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{
				Options:    *NewOptions(),
				Prometheus: &fakeProm{},
				Mapper:     rules.StaticMapper(),
				Metadata:   fake.NewSimpleMetadataClient(fake.NewTestScheme()),
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

func TestRunReloadsOnSIGHUPAndStopsWithContext(t *testing.T) {
	path := rulesFile(t, gaugeRules)
	p, _ := testProvider(t, &fakeProm{series: reloadSeries()}, path)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	hc := p.HealthChecker()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return hc.Check(nil) == nil, nil
	})
	if err != nil {
		t.Fatalf("provider never became ready: %v", err)
	}
	writeFile(t, path, queueRules)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		names := customNames(p)
		return len(names) == 2 && names[0] == "namespaces/backlog", nil
	})
	if err != nil {
		t.Errorf("rules were not reloaded on SIGHUP: %v (metrics %v)", err, customNames(p))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}
