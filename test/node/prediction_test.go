package node

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	// slowStartup is the workload's --startup-delay: /readyz fails until then. With the
	// container's start and the probe's period, a pod is Ready a second or two later, and the
	// lead time (start-up + one sync period) is past its 15 s floor, so the test sees the
	// measured figure, not the bound.
	slowStartup = 14 * time.Second
	// The bounds of the lead time, those of spec.prediction.leadTimeSeconds.
	minLeadTime = 15 * time.Second
	maxLeadTime = time.Hour
)

// refusalReasons are the PredictionActive reasons that say why the forecast is off.
var refusalReasons = []string{
	forecast.ReasonHistoryTooShort, forecast.ReasonHistoryGappy, forecast.ReasonNotSeasonal,
	forecast.ReasonInvalidHistory, prediction.ReasonHistoryUnavailable,
}

// TestPredictionLeadTimeFromRealStartup runs a Deployment of the demo workload (test/workload)
// whose readiness probe fails for its first 14 s, under a PodAutoscaler in ForecastOnly with no
// leadTimeSeconds. The lead time in status is the 90th percentile of the pods' creation → Ready
// (read from the API) plus one sync period; the forecast is off (the node's Prometheus has no
// two days of history) with a reason; and the replicas are unchanged.
func TestPredictionLeadTimeFromRealStartup(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	ensurePodpilot(ctx, t)
	if err := cluster.ImportImage(ctx, imageTarball("workload")); err != nil {
		t.Fatal(err)
	}
	const replicas = 3
	ns := cluster.CreateNamespace(ctx, t, "lead")
	s := &scaled{ns: ns, name: "slow"}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, slowStartDeployment(s.name, replicas), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	rec := s.record(ctx)
	// min 3 on an idle workload: the metrics never ask for more, the bound for no fewer; only
	// the forecast could change the replicas, and ForecastOnly must not.
	cluster.Apply(ctx, t, ns, framework.PodAutoscalerYAML(s.name, "deployment", s.name, replicas, 8, `  resourceMetrics:
  - {resourceName: cpu, targetType: Utilization, averageUtilization: 80}
  prediction: {mode: ForecastOnly}
`))
	// While no pod is Ready, the lead is the default start-up (1m) plus the sync period.
	startingLead := int32(-1)
	var pods []corev1.Pod
	framework.WaitFor(ctx, t, slowStartup+time.Minute, fmt.Sprintf("%d pods Running and Ready", replicas), func(ctx context.Context) (bool, string, error) {
		var err error
		if pods, err = cluster.RunningPods(ctx, ns, s.name); err != nil || len(pods) > 0 {
			return len(pods) == replicas, fmt.Sprintf("%d ready", len(pods)), err
		}
		if pa, err := s.podAutoscaler(ctx); err == nil && pa.Status.Prediction != nil {
			startingLead = pa.Status.Prediction.LeadTimeSeconds
		}
		return false, "0 ready", nil
	})
	startups, p90 := startupTimes(pods)
	want := min(max(p90+syncPeriod, minLeadTime), maxLeadTime)
	if p90+syncPeriod <= minLeadTime {
		t.Fatalf("the pods' start-up (p90 %s) plus the sync period is within the lead time's %s floor: the test would not see the measured lead", p90, minLeadTime)
	}
	var pa *podpilotv1alpha1.PodAutoscaler
	var cond *metav1.Condition
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("status.prediction.leadTimeSeconds %d±1 and PredictionActive set", int(want.Seconds())), func(ctx context.Context) (bool, string, error) {
		var err error
		if pa, err = s.podAutoscaler(ctx); err != nil || pa.Status.Prediction == nil {
			return false, "no status.prediction", err
		}
		lead := pa.Status.Prediction.LeadTimeSeconds
		cond = meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
		return cond != nil && math.Abs(float64(lead)-want.Seconds()) <= 1, fmt.Sprintf("lead %ds, PredictionActive %v", lead, cond), nil
	})
	changes := rec.Stop()
	reportNode(t, "prediction-lead", "pods' creation→Ready %s; p90 %s + sync period %s = %s; status.prediction.leadTimeSeconds %d (%d while no pod was Ready); PredictionActive %s %s: %s",
		startups, p90, syncPeriod, want, pa.Status.Prediction.LeadTimeSeconds, startingLead, cond.Status, cond.Reason, cond.Message)
	if cond.Status != metav1.ConditionFalse || !slices.Contains(refusalReasons, cond.Reason) {
		t.Errorf("PredictionActive %s %s (%s), want False with one of %v: there is no two-day history", cond.Status, cond.Reason, cond.Message, refusalReasons)
	}
	if len(changes) != 1 || changes[0].replicas != replicas {
		t.Errorf("the Deployment's replicas changed under a ForecastOnly PodAutoscaler: %s", describeChanges(changes, created))
	}
}

// startupTimes returns each ready pod's time from creation to its Ready condition's last
// transition, and their 90th percentile (the smallest that at least 90 % of them do not exceed).
func startupTimes(pods []corev1.Pod) (string, time.Duration) {
	var all []time.Duration
	parts := make([]string, 0, len(pods))
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				d := c.LastTransitionTime.Sub(p.CreationTimestamp.Time)
				all = append(all, d)
				parts = append(parts, fmt.Sprintf("%s %s", p.Name, d))
			}
		}
	}
	if len(all) == 0 {
		return "none", 0
	}
	slices.Sort(all)
	return strings.Join(parts, ", "), all[int(math.Ceil(0.9*float64(len(all))))-1]
}

// slowStartDeployment is a Deployment of the demo workload whose /readyz, probed every second,
// fails for slowStartup: a real start-up, measured by the kubelet.
func slowStartDeployment(name string, replicas int32) *appsv1.Deployment {
	d := cluster.Deployment(name, replicas)
	c := &d.Spec.Template.Spec.Containers[0]
	c.Image = "localhost/podpilot/workload:" + imageTag
	c.Args = []string{"--listen=:8080", "--startup-delay=" + slowStartup.String(), "--cpu-per-query=0",
		"--memory-per-query=0", "--max-held-memory=0", "--shutdown-delay=0s"}
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	c.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return d
}
