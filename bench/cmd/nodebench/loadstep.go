package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The load step: the workload image (test/workload, `make images`) answers
// GET /query?n=N on :8080 and spends cpu in proportion. Each Deployment gets
// lowRate requests per second, then highRate, from the host to its Service.
const (
	loadNamespace = "bench-node"
	batch         = 50
	lowRate       = 20  // requests/s × batch queries: ~1000 queries/s, one pod under 50%
	highRate      = 160 // ~8000 queries/s: about 4 pods at 50% of 100m
)

// loadStep steps the load on two identical Deployments of the workload, one
// under a PodAutoscaler and one under the stock HPA (both cpu Utilization
// 50%), and times each from the step to its new pods Ready and serving.
func (e *env) loadStep(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "Load step: PodAutoscaler and stock HPA, real pods",
		Intro: fmt.Sprintf("Two identical Deployments of the workload image (cpu request 100m), one under a PodAutoscaler and one under the stock HPA, "+
			"both cpu Utilization 50%% from metrics.k8s.io (podpilot's), sync period 5s. Each gets %d then %d requests/s of %d queries from the host "+
			"through its Service. Time = step → the last new pod Ready and in the Service's endpoints.", lowRate, highRate, batch)}
	tarball := filepath.Join(e.images, "workload.tar")
	if _, err := os.Stat(tarball); err != nil {
		sec.Notes = []string{"waits for the workload image (test/workload, issue 19 §4): add `workload ./test/workload -` to hack/build-image.sh's table; `make images` then builds it and this section runs."}
		sec.Headline = []string{"load step PodAutoscaler/HPA: waits for the workload image"}
		return sec, nil
	}
	if err := e.c.ImportImage(ctx, tarball); err != nil {
		return sec, err
	}
	if _, err := e.c.ApplyErr(ctx, "", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+loadNamespace+"}\n"), false); err != nil {
		return sec, err
	}
	urls := map[string]string{}
	for _, name := range []string{"w-pa", "w-hpa"} {
		u, err := e.workload(ctx, name)
		if err != nil {
			return sec, err
		}
		urls[name] = u
	}
	if _, err := e.c.ApplyErr(ctx, loadNamespace, framework.PodAutoscalerYAML("w-pa", "deployment", "w-pa", 1, 8, `  resourceMetrics:
  - resourceName: cpu
    targetType: Utilization
    averageUtilization: 50
`), false); err != nil {
		return sec, err
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "w-hpa"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "w-hpa"},
		MinReplicas:    ptr.To[int32](1), MaxReplicas: 8,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
	}}
	if _, err := e.c.Client.AutoscalingV2().HorizontalPodAutoscalers(loadNamespace).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		return sec, fmt.Errorf("create HPA: %w", err)
	}
	rates := map[string]*rateLoad{}
	for name, u := range urls {
		rates[name] = startRate(ctx, u, lowRate)
	}
	defer func() {
		for _, r := range rates {
			r.stop()
		}
	}()
	if err := sleep(ctx, 2*time.Minute); err != nil { // both settle at the low load, with a full rate window
		return sec, err
	}
	before := map[string]int{}
	for name := range urls {
		before[name] = e.readyEndpoints(ctx, name)
	}
	step := time.Now()
	for _, r := range rates {
		r.set(highRate)
	}
	took, err := e.waitScaled(ctx, before, step)
	if err != nil {
		return sec, err
	}
	sec.Tables = []report.Table{{Header: []string{"autoscaler", "pods before", "step → new pods Ready and serving"}, Rows: [][]string{
		{"PodAutoscaler", fmt.Sprint(before["w-pa"]), took["w-pa"].Round(100 * time.Millisecond).String()},
		{"stock HPA", fmt.Sprint(before["w-hpa"]), took["w-hpa"].Round(100 * time.Millisecond).String()},
	}}}
	sec.Headline = []string{fmt.Sprintf("load step to new pods Ready and serving: PodAutoscaler %.2f× the stock HPA's time (one run)",
		took["w-pa"].Seconds()/took["w-hpa"].Seconds())}
	return sec, nil
}

// waitScaled waits until each Deployment has more ready endpoints than
// before and keeps them for 30s more; it returns when the last one came.
func (e *env) waitScaled(ctx context.Context, before map[string]int, step time.Time) (map[string]time.Duration, error) {
	took := map[string]time.Duration{}
	deadline := step.Add(5 * time.Minute)
	last := map[string]int{}
	for time.Now().Before(deadline) {
		for name, n := range before {
			got := e.readyEndpoints(ctx, name)
			if got > last[name] && got > n {
				took[name] = time.Since(step)
			}
			last[name] = max(last[name], got)
		}
		if len(took) == len(before) && time.Since(step) > max(took["w-pa"], took["w-hpa"])+30*time.Second {
			return took, nil
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("not both scaled within 5 minutes: %v", took)
}

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
	d.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: "app", Image: "localhost/podpilot/workload:" + e.o.tag, ImagePullPolicy: corev1.PullNever,
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
