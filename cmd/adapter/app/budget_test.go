package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"
)

// TestInformersUseTheClientBudgetNotTheAutoscalers checks the informers' API budget: the shared
// cache's clients are built from the --client-qps and --client-burst config, and the autoscaler's
// budgets (--kube-api-qps, --kube-api-burst), built from the same config, neither change it nor
// apply to the informers.
func TestInformersUseTheClientBudgetNotTheAutoscalers(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	fs := pflag.NewFlagSet("podpilot", pflag.ContinueOnError)
	for _, set := range o.Flags().FlagSets {
		fs.AddFlagSet(set)
	}
	// One token per 1000 s: a fresh bucket accepts exactly its burst now.
	if err := fs.Parse([]string{"--lister-kubeconfig=" + kubeconfig, "--client-qps=0.001", "--client-burst=3",
		"--kube-api-qps=200", "--kube-api-burst=400"}); err != nil {
		t.Fatal(err)
	}
	restCfg, err := o.Adapter.ClientConfig() // what Run builds the cache from
	if err != nil {
		t.Fatal(err)
	}
	cache, err := newClusterInformers(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	scaler, err := newAutoscaler(o, restCfg, testProvider(t).PodAutoscalerReads(o.Tenancy), metrics.NewKubeRegistry(), cache.kube)
	if err != nil {
		t.Fatal(err)
	}
	if restCfg.QPS != 0.001 || restCfg.Burst != 3 {
		t.Errorf("the shared config after building the autoscaler: qps %g burst %d, want --client-qps 0.001 and --client-burst 3", restCfg.QPS, restCfg.Burst)
	}
	informers := budgetOf(cache.client)
	if informers.qps != float32(0.001) || informers.burst != 3 {
		t.Errorf("the informers' client: qps %g, burst %d; want --client-qps 0.001 and --client-burst 3", informers.qps, informers.burst)
	}
	if got := budgetOf(scaler.kube); got.qps != 200 || got.burst != 400 {
		t.Errorf("the autoscaler's read client: qps %g, burst %d; want --kube-api-qps 200 and --kube-api-burst 400", got.qps, got.burst)
	}
}

// budget is a client's rate limit: its QPS, and its burst as the requests a fresh bucket
// accepts at once (the limit is read with a QPS too low to refill within the count).
type budget struct {
	qps   float32
	burst int
}

func budgetOf(c kubernetes.Interface) budget {
	rl := c.CoreV1().RESTClient().GetRateLimiter()
	b := budget{qps: rl.QPS()}
	for b.burst < 1000 && rl.TryAccept() {
		b.burst++
	}
	return b
}
