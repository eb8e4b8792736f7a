package node

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/loadgen"
)

// The in-place resize test (issue 31 §2, kubernetes#142155): two identical Deployments of the demo
// workload under the same constant cpu load, one scaled by a stock HPA (kube-controller-manager),
// the other by the equivalent PodAutoscaler (cpu Utilization 50%, no scale-down stabilization).
// One pod of each is resized in place (the pods' resize subresource) to a cpu request of all the
// node's allocatable cpu, which only an empty node could grant: the kubelet marks the resize
// PodResizePending (Deferred) and the container keeps running with its old request, which is in
// effect. (A request beyond the allocatable cpu, which the kubelet would mark Infeasible, is refused
// by kube-apiserver 1.37 at the resize subresource: "node didn't have enough allocatable resources".) The stock HPA divides by the
// spec's request and reads the resize as a drop in utilization; the PodAutoscaler divides by the
// request in effect and must keep its replicas. (A resize the node can grant is actuated within
// seconds, after which both autoscalers rightly divide by the bigger request: it would test the
// kubelet's speed, not the rule.)
const (
	resizeReplicas = 2
	// resizeQueriesPerPod is each pod's constant load: about 40m of cpu (docs/demo-workload.md:
	// 2000 queries/s cost about 50m). What it costs on the machine at hand varies: two runs here
	// read 27% and 30% of the 100m request, close to the 25% at which a 50% target scales 2
	// replicas in to 1, and a CI run lost a pod of each workload before the resize. So the target
	// is set from the stock HPA's own reading (holdingTarget).
	resizeQueriesPerPod = 1600
	// resizeHold is where the reading sits against the target: 2 replicas hold for a ratio in
	// (0.5, 1.1] (a scale-in needs at most half, a scale-up more than the 10% tolerance), so 0.8
	// leaves room for noise both ways.
	resizeHold = 0.8
	// resizeReadings is how many of the stock HPA's readings, 10 s apart, holdingTarget averages.
	resizeReadings = 4
	// resizeObserve is how long both replica series are recorded after the resize is
	// pending: several sync periods of both (kube-controller-manager's 5 s, podpilot's 2 s).
	resizeObserve = 90 * time.Second
)

// TestInPlaceResizeKeepsThePodAutoscalersReplicas records both autoscalers' replicas while a pod
// of each workload is being resized in place; the PodAutoscaler's must not change, the stock
// HPA's series is logged (1.37.2 is expected to scale in).
func TestInPlaceResizeKeepsThePodAutoscalersReplicas(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	ensurePodpilot(ctx, t)
	if err := cluster.ImportImage(ctx, imageTarball("workload")); err != nil {
		t.Fatal(err)
	}
	ns := cluster.CreateNamespace(ctx, t, "resize")
	hpaSide, ppaSide := &scaled{ns: ns, name: "web-hpa"}, &scaled{ns: ns, name: "web-ppa"}
	for _, s := range []*scaled{hpaSide, ppaSide} {
		if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, resizeDeployment(s.name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*scaled{hpaSide, ppaSide} {
		pods := waitRunning(ctx, t, s, resizeReplicas)
		for _, p := range pods {
			constantQueries(ctx, t, p)
		}
	}
	noStabilization := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)},
	}
	// The stock HPA is first pinned at resizeReplicas, so that it reads the pods' cpu without
	// scaling; the target is then set so that this reading sits at resizeHold of it.
	hpas := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	hpa := framework.HPA(hpaSide.name, resizeReplicas, resizeReplicas, noStabilization, framework.CPUUtilization(50))
	if _, err := hpas.Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	target := holdingTarget(ctx, t, hpaSide)
	hpa, err := hpas.Get(ctx, hpaSide.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas = ptr.To[int32](1), 4
	hpa.Spec.Metrics = []autoscalingv2.MetricSpec{framework.CPUUtilization(target)}
	if hpa, err = hpas.Update(ctx, hpa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pa, err := framework.PodAutoscalerFor(hpa, ppaSide.name, ppaSide.name)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := versioned.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AutoscalingV1alpha1().PodAutoscalers(ns).Create(ctx, pa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBothReadCPU(ctx, t, hpaSide, ppaSide)

	start := time.Now()
	recs := [2]*replicaRecorder{hpaSide.record(ctx), ppaSide.record(ctx)}
	pending := allocatableCPU(ctx, t)
	for _, s := range []*scaled{hpaSide, ppaSide} {
		resizeOnePod(ctx, t, s, pending)
	}
	t.Logf("+%.1fs both resizes pending; recording for %s", time.Since(start).Seconds(), resizeObserve)
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(resizeObserve):
	}
	hpaSeries, ppaSeries := recs[0].Stop(), recs[1].Stop()
	reportNode(t, "resize", "cpu request of one pod of each raised in place to %s (pending); replicas over %s: stock HPA %s; PodAutoscaler %s",
		pending.String(), time.Since(start).Round(time.Second), describeChanges(hpaSeries, start), describeChanges(ppaSeries, start))
	logResizeStatuses(ctx, t, pc, ns, hpaSide.name, ppaSide.name)
	if len(ppaSeries) != 1 || ppaSeries[0].replicas != resizeReplicas {
		t.Errorf("the PodAutoscaler's replicas changed during an in-place resize under constant load: %s, want %d throughout",
			describeChanges(ppaSeries, start), resizeReplicas)
	}
}

// resizeDeployment is a Deployment of the demo workload whose cpu follows the queries it answers
// (calibrated at start-up), requesting 100m of cpu, with no memory held per query.
func resizeDeployment(name string) *appsv1.Deployment {
	d := slowStartDeployment(name, resizeReplicas)
	c := &d.Spec.Template.Spec.Containers[0]
	c.Args = []string{"--listen=:8080", "--memory-per-query=0", "--max-held-memory=0", "--shutdown-delay=0s"}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	return d
}

// waitRunning waits until the workload has n pods Running and Ready, and returns them.
func waitRunning(ctx context.Context, t *testing.T, s *scaled, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("%d pods of %s Running and Ready", n, s.name), func(ctx context.Context) (bool, string, error) {
		var err error
		pods, err = cluster.RunningPods(ctx, s.ns, s.name)
		return len(pods) == n, fmt.Sprintf("%d ready", len(pods)), err
	})
	return pods
}

// constantQueries offers resizeQueriesPerPod queries/s to pod until the test ends.
func constantQueries(ctx context.Context, t *testing.T, pod corev1.Pod) {
	t.Helper()
	g, err := loadgen.New(loadgen.DefaultConfig(fmt.Sprintf("http://%s:8080/query", pod.Status.PodIP)), clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		profile := loadgen.Profile{{Name: "constant", Duration: 15 * time.Minute, From: resizeQueriesPerPod, To: resizeQueriesPerPod}}
		_, _ = g.Run(ctx, profile, nil) // a pod the stock HPA removes fails its queries; that is expected
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		t.Logf("queries to %s: %+v (last failure: %s)", pod.Name, g.Counts(), g.LastFailure())
	})
}

// waitBothReadCPU waits until the stock HPA and the PodAutoscaler both read the pods' cpu and hold
// their workloads at resizeReplicas.
func waitBothReadCPU(ctx context.Context, t *testing.T, hpaSide, ppaSide *scaled) {
	t.Helper()
	framework.WaitFor(ctx, t, 3*time.Minute, "both autoscalers reading cpu at "+fmt.Sprint(resizeReplicas)+" replicas", func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(hpaSide.ns).Get(ctx, hpaSide.name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		pa, err := ppaSide.podAutoscaler(ctx)
		if err != nil {
			return false, "", err
		}
		hpaActive := false
		for _, c := range h.Status.Conditions {
			hpaActive = hpaActive || (c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionTrue)
		}
		ppaActive := meta.IsStatusConditionTrue(pa.Status.Conditions, "ScalingActive")
		ok := hpaActive && ppaActive && len(h.Status.CurrentMetrics) == 1 && len(pa.Status.CurrentMetrics) == 1 &&
			h.Status.DesiredReplicas == resizeReplicas && pa.Status.DesiredReplicas == resizeReplicas
		return ok, fmt.Sprintf("HPA active %v desired %d metrics %d; PodAutoscaler active %v desired %d metrics %d",
			hpaActive, h.Status.DesiredReplicas, len(h.Status.CurrentMetrics), ppaActive, pa.Status.DesiredReplicas, len(pa.Status.CurrentMetrics)), nil
	})
}

// holdingTarget averages resizeReadings of the pinned stock HPA's cpu utilization and returns the target at which that mean is resizeHold of it.
func holdingTarget(ctx context.Context, t *testing.T, s *scaled) int32 {
	t.Helper()
	var readings []int32
	for len(readings) < resizeReadings {
		var u int32
		framework.WaitFor(ctx, t, 3*time.Minute, "a cpu reading of the pinned stock HPA", func(ctx context.Context) (bool, string, error) {
			h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(s.ns).Get(ctx, s.name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			for _, m := range h.Status.CurrentMetrics {
				if m.Resource != nil && m.Resource.Current.AverageUtilization != nil {
					u = *m.Resource.Current.AverageUtilization
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("conditions %+v", h.Status.Conditions), nil
		})
		readings = append(readings, u)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Second): // metrics-server reads each pod about every 15 s
		}
	}
	sum := int32(0)
	for _, r := range readings {
		sum += r
	}
	mean := float64(sum) / float64(len(readings))
	target := max(int32(math.Round(mean/resizeHold)), 1)
	t.Logf("the stock HPA read %v%% of the cpu request at %d replicas (mean %.1f%%): target %d%%", readings, resizeReplicas, mean, target)
	return target
}

// allocatableCPU is a cpu request only an empty node could grant: all its allocatable cpu.
func allocatableCPU(ctx context.Context, t *testing.T) resource.Quantity {
	t.Helper()
	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, cluster.Node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alloc := node.Status.Allocatable[corev1.ResourceCPU]
	return *resource.NewMilliQuantity(alloc.MilliValue(), resource.DecimalSI)
}

// resizeOnePod raises the cpu request of the workload's first pod to cpu through the pods'
// resize subresource and waits until the kubelet reports the resize pending (Deferred or Infeasible).
func resizeOnePod(ctx context.Context, t *testing.T, s *scaled, cpu resource.Quantity) {
	t.Helper()
	pods, err := cluster.RunningPods(ctx, s.ns, s.name)
	if err != nil || len(pods) == 0 {
		t.Fatalf("pods of %s: %d (%v)", s.name, len(pods), err)
	}
	pod := pods[0]
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":%q,"resources":{"requests":{"cpu":%q}}}]}}`, pod.Spec.Containers[0].Name, cpu.String())
	if _, err := cluster.Client.CoreV1().Pods(s.ns).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatalf("resize pod %s: %v", pod.Name, err)
	}
	framework.WaitFor(ctx, t, time.Minute, "the resize of "+pod.Name+" pending", func(ctx context.Context) (bool, string, error) {
		p, err := cluster.Client.CoreV1().Pods(s.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending && c.Status == corev1.ConditionTrue {
				t.Logf("pod %s: %s %s %q; requests in effect %s", p.Name, c.Type, c.Reason, c.Message, requestsInEffect(p))
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("conditions %v", p.Status.Conditions), nil
	})
}

// requestsInEffect renders the cpu requests the pod's container statuses report.
func requestsInEffect(p *corev1.Pod) string {
	parts := make([]string, 0, len(p.Status.ContainerStatuses))
	for _, st := range p.Status.ContainerStatuses {
		q := "none"
		if st.Resources != nil {
			if r, ok := st.Resources.Requests[corev1.ResourceCPU]; ok {
				q = r.String()
			}
		}
		parts = append(parts, st.Name+"="+q)
	}
	return strings.Join(parts, ", ")
}

// logResizeStatuses logs what each autoscaler last read and decided.
func logResizeStatuses(ctx context.Context, t *testing.T, pc versioned.Interface, ns, hpaName, paName string) {
	t.Helper()
	if h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, hpaName, metav1.GetOptions{}); err == nil {
		t.Logf("stock HPA: desired %d, current metrics %+v, conditions %+v", h.Status.DesiredReplicas, h.Status.CurrentMetrics, h.Status.Conditions)
	}
	if pa, err := pc.AutoscalingV1alpha1().PodAutoscalers(ns).Get(ctx, paName, metav1.GetOptions{}); err == nil {
		t.Logf("PodAutoscaler: desired %d, current metrics %+v, conditions %+v", pa.Status.DesiredReplicas, pa.Status.CurrentMetrics, pa.Status.Conditions)
	}
}
