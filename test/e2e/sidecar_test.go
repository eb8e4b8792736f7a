package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestPodAutoscalerUtilizationCountsNativeSidecarRequests: pods with an app
// container (100m) and a native sidecar (restartable init container, 100m)
// use 50m in the app container. Utilization is usage over the requests of
// both, 50/200 = 25%, as upstream; counting only spec.containers would read
// 50% and scale up against the 25% target.
func TestPodAutoscalerUtilizationCountsNativeSidecarRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-sidecar")
	d := cluster.Deployment("meshed", 2)
	d.Spec.Template.Spec.InitContainers = []corev1.Container{{
		Name: "proxy", Image: "registry.invalid/podpilot/fake:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
	}}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "meshed", 0.05, 64*mi)
	t.Cleanup(usage.Stop)
	cluster.Apply(ctx, t, ns, resourceOnlyPodAutoscaler("cpu", "meshed", "{resourceName: cpu, targetType: Utilization, averageUtilization: 25}"))
	framework.WaitFor(ctx, t, 2*time.Minute, "cpu utilization of app and sidecar requests in status", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "cpu")
		if err != nil {
			return false, "", err
		}
		if len(pa.Status.CurrentMetrics) != 1 || pa.Status.CurrentMetrics[0].AverageUtilization == nil {
			return false, describeConditions(pa), nil
		}
		u := *pa.Status.CurrentMetrics[0].AverageUtilization
		return u >= 24 && u <= 26 && pa.Status.DesiredReplicas == 2, fmt.Sprintf("utilization %d%% (want 25%%); %s", u, describeConditions(pa)), nil
	})
}
