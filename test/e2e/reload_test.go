package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// renamingRules serves the per-pod gauge series as the metric name as.
func renamingRules(series, as string) string {
	return fmt.Sprintf(`rules:
- seriesQuery: '%s{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name: {matches: '^%s$', as: '%s'}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`, series, series, as)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	// Written next to the file and renamed over it, as a ConfigMap update is.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestRuleFileReloadsWithoutRestart runs a podpilot of its own on a rule file
// and changes the file under it: a good file takes effect without a restart,
// a bad one is logged and the last good rules keep serving, and SIGHUP
// reloads too.
func TestRuleFileReloadsWithoutRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "reload")
	pods := startWorkload(ctx, t, ns, "web", 1)
	exp := serveExporter(t)
	exp.SetGauge("reload_probe", map[string]string{"namespace": ns, "pod": pods[0]}, 7)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, rulesFile, renamingRules("reload_probe", "first_name"))
	p := cluster.StartPodpilot(t, podpilotBinary, "--config="+rulesFile, "--metrics-relist-interval=2s",
		"--autoscaler-enabled=false", "--leader-elect=false")
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	direct, err := kubernetes.NewForConfig(cluster.DirectConfig(p))
	if err != nil {
		t.Fatal(err)
	}
	served := func(metric string) framework.Condition {
		path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/" + metric
		return func(ctx context.Context) (bool, string, error) {
			b, err := direct.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Raw()
			return err == nil && strings.Contains(string(b), `"value":"7"`), fmt.Sprintf("%s %v", b, err), nil
		}
	}
	framework.WaitFor(ctx, t, time.Minute, "first_name served", served("first_name"))

	writeFile(t, rulesFile, renamingRules("reload_probe", "second_name"))
	framework.WaitFor(ctx, t, 30*time.Second, "second_name served after the file changed", served("second_name"))

	writeFile(t, rulesFile, "rules:\n- seriesQuery: '{'\n  metricQuery: typo\n")
	framework.WaitFor(ctx, t, 30*time.Second, "the bad file rejected in the log", func(context.Context) (bool, string, error) {
		return strings.Contains(p.LogTail(1<<20), "Rule file rejected; keeping the last good rules"), "", nil
	})
	if ok, state, _ := served("second_name")(ctx); !ok {
		t.Fatalf("the last good rules stopped serving after a bad file: %s", state)
	}

	writeFile(t, rulesFile, renamingRules("reload_probe", "third_name"))
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(ctx, t, 30*time.Second, "third_name served after SIGHUP", served("third_name"))
	if !strings.Contains(p.LogTail(1<<20), `trigger="sighup"`) {
		t.Logf("the reload was picked up by the file watch before SIGHUP arrived")
	}
}
