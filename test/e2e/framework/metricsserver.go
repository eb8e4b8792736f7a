package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// MetricsServer is metrics-server (built from its module by `make
// node-tools`) running on the host beside a real node: the reference for
// metrics.k8s.io that most clusters run. It is not registered as an
// APIService (podpilot may own v1beta1.metrics.k8s.io); it is queried
// directly.
type MetricsServer struct {
	// Port is its secure port on 127.0.0.1.
	Port    int
	LogPath string
	cmd     *exec.Cmd
	pidFile string
	client  *http.Client
	done    chan struct{}
}

// StartMetricsServer starts metrics-server against the cluster's kubelet
// with resolution (at least 10s) and waits until it serves.
func (c *Cluster) StartMetricsServer(ctx context.Context, resolution time.Duration) (*MetricsServer, error) {
	bin, err := ToolPath("METRICS_SERVER")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	name := "metrics-server-" + strconv.Itoa(port)
	m := &MetricsServer{Port: port, LogPath: filepath.Join(c.StateDir, "logs", name+".log"),
		pidFile: filepath.Join(c.StateDir, "pids", name+".pid"), done: make(chan struct{})}
	m.cmd = exec.Command(bin, "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--cert-dir="+filepath.Join(c.StateDir, name), "--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port",
		"--kubelet-certificate-authority="+filepath.Join(c.StateDir, "pki", "ca.crt"),
		"--metric-resolution="+resolution.String(), "--kubelet-request-timeout="+(resolution/2).String(), "--v=1")
	if err := startLogged(m.cmd, m.LogPath, m.pidFile, m.done); err != nil {
		return nil, fmt.Errorf("start metrics-server: %w", err)
	}
	tlsCfg, err := rest.TLSConfigFor(c.Config)
	if err != nil {
		m.Stop()
		return nil, fmt.Errorf("client certificate for metrics-server: %w", err)
	}
	tlsCfg = tlsCfg.Clone()
	tlsCfg.RootCAs, tlsCfg.InsecureSkipVerify = nil, true //nolint:gosec // metrics-server's self-signed certificate on loopback
	m.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-m.done:
			return false, fmt.Errorf("metrics-server exited; log %s", m.LogPath)
		default:
		}
		code, err := m.get(ctx, "/readyz", nil)
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		m.Stop()
		return nil, fmt.Errorf("metrics-server not ready: %w", err)
	}
	return m, nil
}

// PodMetrics returns metrics-server's metrics of the pods in ns.
func (m *MetricsServer) PodMetrics(ctx context.Context, ns string) (*metricsv1beta1.PodMetricsList, error) {
	var list metricsv1beta1.PodMetricsList
	code, err := m.get(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+ns+"/pods", &list)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("metrics-server pod metrics of %s: HTTP %d", ns, code)
	}
	return &list, nil
}

// NodeMetrics returns metrics-server's metrics of the nodes.
func (m *MetricsServer) NodeMetrics(ctx context.Context) (*metricsv1beta1.NodeMetricsList, error) {
	var list metricsv1beta1.NodeMetricsList
	code, err := m.get(ctx, "/apis/metrics.k8s.io/v1beta1/nodes", &list)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("metrics-server node metrics: HTTP %d", code)
	}
	return &list, nil
}

func (m *MetricsServer) get(ctx context.Context, path string, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", m.Port, path), nil)
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("get %s from metrics-server: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("read %s from metrics-server: %w", path, err)
	}
	if into != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, into); err != nil {
			return 0, fmt.Errorf("decode %s from metrics-server: %w", path, err)
		}
	}
	return resp.StatusCode, nil
}

// Stop terminates metrics-server and waits for it to exit.
func (m *MetricsServer) Stop() { stopLogged(m.cmd, m.pidFile, m.done) }
