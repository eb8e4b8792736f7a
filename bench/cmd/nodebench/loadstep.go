package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The load steps: the workload image (test/workload, `make images`) answers
// GET /query?n=N on :8080, spends cpu in proportion and counts the queries
// in zdns_vanguard_queries_total. Each Deployment gets lowRate requests per
// second, then highRate, from the host to its Service.
const (
	loadNamespace = "bench-node"
	batch         = 50
	lowRate       = 20  // requests/s × batch queries: 1000 queries/s, one pod at half its targets
	highRate      = 160 // 8000 queries/s: 4 pods at their targets (2000 queries/s, cpu 50% of 100m)
)

// readyEndpoints counts the ready endpoints of Service name.
func (e *env) readyEndpoints(ctx context.Context, name string) int {
	list, err := e.c.Client.DiscoveryV1().EndpointSlices(loadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

// workload creates Deployment and Service name running the workload image,
// and returns the Service's URL.
func (e *env) workload(ctx context.Context, name string) (string, error) {
	labels := map[string]string{"app": name}
	d := e.c.Deployment(name, 1)
	// Prometheus' pod job scrapes the pods that ask for it (the demo's
	// Deployment does the same), at the global scrape interval.
	d.Spec.Template.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"}
	d.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: "app", Image: "localhost/podpilot/workload:" + e.o.tag, ImagePullPolicy: corev1.PullNever,
		// No held memory: only cpu and the query counter matter here.
		Args:  []string{"--memory-per-query=0"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
			PeriodSeconds: 1},
	}}
	if _, err := e.c.Client.AppsV1().Deployments(loadNamespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create Deployment %s: %w", name, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: labels,
		Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromString("http")}}}}
	created, err := e.c.Client.CoreV1().Services(loadNamespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create Service %s: %w", name, err)
	}
	return fmt.Sprintf("http://%s:8080/query?n=%d", created.Spec.ClusterIP, batch), nil
}

// rateLoad sends GET url at a settable rate from the host until stopped.
type rateLoad struct {
	mu     sync.Mutex
	rate   int
	cancel context.CancelFunc
	done   chan struct{}
}

func startRate(ctx context.Context, url string, rate int) *rateLoad {
	ctx, cancel := context.WithCancel(ctx)
	r := &rateLoad{rate: rate, cancel: cancel, done: make(chan struct{})}
	client := &http.Client{Timeout: 5 * time.Second}
	go func() {
		defer close(r.done)
		var wg sync.WaitGroup
		defer wg.Wait()
		next := time.Now()
		for ctx.Err() == nil {
			r.mu.Lock()
			interval := time.Second / time.Duration(r.rate)
			r.mu.Unlock()
			next = next.Add(interval)
			if err := sleep(ctx, time.Until(next)); err != nil {
				return
			}
			wg.Go(func() {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if err != nil {
					return
				}
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			})
		}
	}()
	return r
}

func (r *rateLoad) set(rate int) {
	r.mu.Lock()
	r.rate = rate
	r.mu.Unlock()
}

func (r *rateLoad) stop() {
	r.cancel()
	<-r.done
}
