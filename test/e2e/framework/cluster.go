package framework

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running local control plane and clients for it.
type Cluster struct {
	// StateDir holds the cluster's certificates, logs, pids and env file.
	StateDir string
	// Kubeconfig is the cluster-admin kubeconfig's path.
	Kubeconfig string
	// PrometheusURL is Prometheus' base URL.
	PrometheusURL string
	// Backend is what podpilot queries (hack/local-up.sh's PODPILOT_BACKEND:
	// prometheus, victoriametrics or thanos) and BackendURL its base URL, the
	// --prometheus-url RunPodpilot passes: PrometheusURL for prometheus.
	Backend, BackendURL string
	// TargetsDir is where exporters register themselves for Prometheus to scrape.
	TargetsDir string
	// KwokNode is the fake node pods must set as spec.nodeName.
	KwokNode string
	// KCMPort is kube-controller-manager's secure port.
	KCMPort string
	// Node describes the real node, if the cluster runs one (UpRealNode).
	Node RealNode

	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  *restmapper.DeferredDiscoveryRESTMapper

	started bool
}

// RepoRoot returns the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Up starts a local control plane with a kwok node in stateDir with
// hack/local-up.sh, or, if envFile is not empty, connects to the one that
// env file describes.
func Up(ctx context.Context, stateDir, envFile string) (*Cluster, error) {
	return up(ctx, stateDir, envFile, "kwok")
}

// UpRealNode is Up with a real node (PODPILOT_NODE=real): a kubelet,
// containerd, kube-proxy and kube-scheduler run real containers.
func UpRealNode(ctx context.Context, stateDir, envFile string) (*Cluster, error) {
	return UpRealNodeWith(ctx, stateDir, envFile, nil)
}

// UpRealNodeWith is UpRealNode with more environment for hack/local-up.sh,
// e.g. HPA_SYNC_PERIOD=15s to run kube-controller-manager's HPA at its
// defaults (the variables are listed at the top of that script).
func UpRealNodeWith(ctx context.Context, stateDir, envFile string, env []string) (*Cluster, error) {
	c, err := up(ctx, stateDir, envFile, "real", env...)
	if err != nil {
		return nil, err
	}
	if c.Node.Name == "" {
		_ = c.Down(ctx)
		return nil, fmt.Errorf("the cluster in %s has no real node (started with PODPILOT_NODE=kwok?)", c.StateDir)
	}
	return c, nil
}

func up(ctx context.Context, stateDir, envFile, node string, extraEnv ...string) (*Cluster, error) {
	c := &Cluster{}
	if envFile == "" {
		envFile = filepath.Join(stateDir, "env")
		cmd := exec.CommandContext(ctx, filepath.Join(RepoRoot(), "hack", "local-up.sh"))
		cmd.Env = append(append(os.Environ(), extraEnv...), "PODPILOT_STATE_DIR="+stateDir, "PODPILOT_NODE="+node)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("hack/local-up.sh: %w", err)
		}
		c.started = true
	}
	env, err := readEnv(envFile)
	if err != nil {
		return nil, err
	}
	c.StateDir, c.Kubeconfig, c.PrometheusURL = env["PODPILOT_STATE_DIR"], env["KUBECONFIG"], env["PROMETHEUS_URL"]
	c.TargetsDir, c.KwokNode, c.KCMPort = env["PROMETHEUS_TARGETS_DIR"], env["KWOK_NODE"], env["KCM_PORT"]
	c.Backend, c.BackendURL = env["PODPILOT_BACKEND"], env["BACKEND_URL"]
	if c.Backend == "" { // an env file written before PODPILOT_BACKEND
		c.Backend, c.BackendURL = "prometheus", c.PrometheusURL
	}
	c.Node = RealNode{
		Name: env["NODE_NAME"], IP: env["NODE_IP"], PodCIDR: env["POD_CIDR"], Containerd: env["CONTAINERD_ADDRESS"],
		GuardChain: env["GUARD_CHAIN"], PrometheusServiceURL: env["PROMETHEUS_CLUSTER_URL"],
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build clientset: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build discovery client: %w", err)
	}
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return nil
}

// Down stops the control plane if Up started it.
func (c *Cluster) Down(ctx context.Context) error {
	if !c.started {
		return nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(RepoRoot(), "hack", "local-down.sh"), c.StateDir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/local-down.sh: %w", err)
	}
	return nil
}

// readEnv parses the "export K=V" lines of hack/local-up.sh's env file.
func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read cluster env: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "export ")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read cluster env: %w", err)
	}
	return env, nil
}
