package framework

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// RealNode is the kubelet node hack/local-up.sh starts with
// PODPILOT_NODE=real (hack/lib-node.sh).
type RealNode struct {
	// Name is the Node's name.
	Name string
	// IP is the node's address: the cluster bridge's address, where the
	// kube-apiserver and Prometheus listen too.
	IP string
	// PodCIDR is the range pods get addresses from.
	PodCIDR string
	// Containerd is the node's containerd socket.
	Containerd string
	// GuardChain is the iptables chain (mangle table) whose rules drop and
	// count packets that would leave the machine.
	GuardChain string
	// PrometheusServiceURL is Prometheus' URL for pods: the ClusterIP of the
	// Service monitoring/prometheus.
	PrometheusServiceURL string
}

// PrometheusService names the Service (and its EndpointSlice) through which
// pods reach Prometheus.
const (
	PrometheusServiceNamespace = "monitoring"
	prometheusEndpointSlice    = "prometheus-node"
)

// GuardPackets returns how many packets the node's guards have dropped: each
// one would have left the machine. Real-node tests require 0.
func (c *Cluster) GuardPackets(ctx context.Context) (int64, error) {
	if c.Node.GuardChain == "" {
		return 0, fmt.Errorf("the cluster has no real node")
	}
	out, err := exec.CommandContext(ctx, "iptables", "-w", "-t", "mangle", "-L", c.Node.GuardChain, "-v", "-x", "-n").Output()
	if err != nil {
		return 0, fmt.Errorf("read guard chain %s: %w", c.Node.GuardChain, err)
	}
	var drops int64
	var rules int
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[2] != "DROP" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse guard counter %q: %w", line, err)
		}
		drops += n
		rules++
	}
	if rules == 0 {
		return 0, fmt.Errorf("guard chain %s has no DROP rules:\n%s", c.Node.GuardChain, out)
	}
	return drops, nil
}

// ImportImage imports an image tarball (hack/build-image.sh's output) into
// the node's containerd, where pods with imagePullPolicy Never find it.
func (c *Cluster) ImportImage(ctx context.Context, tarball string) error {
	cmd := exec.CommandContext(ctx, "ctr", "-a", c.Node.Containerd, "-n", "k8s.io", "images", "import", tarball)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("import image %s: %w: %s", tarball, err, stderr.String())
	}
	return nil
}

// PointPrometheusService makes the Service monitoring/prometheus lead to
// host:port, e.g. a PrometheusProxy listening on the node's address: pods
// keep their Prometheus URL while the test puts something in between.
func (c *Cluster) PointPrometheusService(ctx context.Context, host string, port int) error {
	slices := c.Client.DiscoveryV1().EndpointSlices(PrometheusServiceNamespace)
	es, err := slices.Get(ctx, prometheusEndpointSlice, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get EndpointSlice %s/%s: %w", PrometheusServiceNamespace, prometheusEndpointSlice, err)
	}
	es.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}
	for i := range es.Ports {
		es.Ports[i].Port = ptr.To(int32(port))
	}
	if _, err := slices.Update(ctx, es, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("point EndpointSlice %s/%s at %s:%d: %w", PrometheusServiceNamespace, prometheusEndpointSlice, host, port, err)
	}
	return nil
}
