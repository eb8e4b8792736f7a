package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiServiceNamespace holds the Service the local APIServices point at.
const apiServiceNamespace = "podpilot-system"

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// MetricsAPIServices are the APIServices podpilot serves.
var MetricsAPIServices = []string{
	"v1beta2.custom.metrics.k8s.io",
	"v1beta1.custom.metrics.k8s.io",
	"v1beta1.external.metrics.k8s.io",
	"v1beta1.metrics.k8s.io",
}

// localRouting routes API groups to a process on this machine: a Service
// without selector (%[3]s in namespace %[1]s) and an FQDN EndpointSlice whose
// address is 127.0.0.1 (IPv4 slices reject loopback; the aggregator dials FQDN ones).
const localRouting = `
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: %[3]s, namespace: %[1]s}
spec:
  ports: [{name: https, port: 443, targetPort: %[2]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[3]s-local
  namespace: %[1]s
  labels: {kubernetes.io/service-name: %[3]s}
addressType: FQDN
endpoints: [{addresses: ["127.0.0.1"]}]
ports: [{name: https, port: %[2]d, protocol: TCP}]
`

// apiService is one APIService for the Service of localRouting, skipping TLS
// verification of the process' self-signed certificate.
const apiService = `---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: %[1]s}
spec:
  group: %[2]s
  version: %[3]s
  groupPriorityMinimum: 100
  versionPriority: %[4]d
  insecureSkipTLSVerify: true
  service: {name: %[6]s, namespace: %[5]s, port: 443}
`

// localAPIServices renders localRouting and an APIService for each of
// MetricsAPIServices, pointing at podpilot on port.
func localAPIServices(port int) []byte {
	return hostAPIServices(apiServiceNamespace, "podpilot", port, MetricsAPIServices)
}

// hostAPIServices renders localRouting for service in namespace and an
// APIService for each of names, pointing at port on this machine.
func hostAPIServices(namespace, service string, port int, names []string) []byte {
	doc := fmt.Appendf(nil, localRouting, namespace, port, service)
	for _, name := range names {
		version, group, _ := strings.Cut(name, ".")
		priority := 100
		if version == "v1beta2" { // preferred over v1beta1
			priority = 200
		}
		doc = fmt.Appendf(doc, apiService, name, group, version, priority, namespace, service)
	}
	return doc
}

// RegisterHostAPIs points the APIServices names at the process on port on
// this machine, through Service service in namespace, and waits until each
// is Available: how a bench runs metrics-server or prometheus-adapter as a
// host process behind its APIServices.
func (c *Cluster) RegisterHostAPIs(ctx context.Context, namespace, service string, port int, names ...string) error {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := c.apply(ctx, "", hostAPIServices(namespace, service, port, names), opts); err != nil {
		return err
	}
	for _, name := range names {
		err := Poll(ctx, 2*time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return c.apiServiceAvailable(ctx, name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RegisterMetricsAPIs points podpilot's APIServices at port on this machine
// (including metrics.k8s.io: start podpilot with resourceRules) and waits
// until every one is Available.
func (c *Cluster) RegisterMetricsAPIs(ctx context.Context, port int) error {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := c.apply(ctx, "", localAPIServices(port), opts); err != nil {
		return err
	}
	for _, name := range MetricsAPIServices {
		err := Poll(ctx, time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return c.apiServiceAvailable(ctx, name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// UnregisterMetricsAPIs deletes podpilot's APIServices.
func (c *Cluster) UnregisterMetricsAPIs(ctx context.Context) error {
	for _, name := range MetricsAPIServices {
		err := c.Dynamic.Resource(apiServiceGVR).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete APIService %s: %w", name, err)
		}
	}
	return nil
}

func (c *Cluster) apiServiceAvailable(ctx context.Context, name string) (bool, string, error) {
	u, err := c.Dynamic.Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] == "Available" {
			return cond["status"] == "True", fmt.Sprintf("%v: %v", cond["reason"], cond["message"]), nil
		}
	}
	return false, "no Available condition yet", nil
}

// RawGet GETs path (which may carry a query string) from the kube-apiserver
// as cluster-admin, like ` + "`kubectl get --raw`" + `. A failure is returned as an
// *apierrors.StatusError carrying the server's Status (code, reason, message).
func (c *Cluster) RawGet(ctx context.Context, path string) ([]byte, error) {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return nil, fmt.Errorf("build HTTP client: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Config.Host, "/")+path, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	var status metav1.Status
	if json.Unmarshal(body, &status) != nil || status.Kind != "Status" {
		status = metav1.Status{Code: int32(resp.StatusCode), Message: string(body)}
	}
	return nil, &apierrors.StatusError{ErrStatus: status}
}

// AnonymousGet GETs path from the kube-apiserver without credentials and
// returns the HTTP status code.
func (c *Cluster) AnonymousGet(ctx context.Context, path string) (int, error) {
	anon, err := kubernetes.NewForConfig(rest.AnonymousClientConfig(c.Config))
	if err != nil {
		return 0, fmt.Errorf("build anonymous client: %w", err)
	}
	var code int
	res := anon.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).StatusCode(&code)
	if code == 0 {
		return 0, fmt.Errorf("get %s: %w", path, res.Error())
	}
	return code, nil
}
