package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestPodAutoscalerScalesToZeroAndBack: a job backlog exported as a gauge
// (an External metric, Value target 10) drives a Deployment with
// minReplicas 0. An empty backlog scales it from 1 to 0 (ScaledToZero True);
// a backlog of 35 scales it from 0 to ceil(35/10) = 4 (False,
// NotScaledToZero); an empty backlog takes it back to 0. After one more
// scale-up a person sets the Deployment to 0: that zero is not podpilot's,
// so scaling stays disabled while the backlog still asks for 4.
func TestPodAutoscalerScalesToZeroAndBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-zero")
	startWorkload(ctx, t, ns, "worker", 1)
	exp := serveExporter(t)
	backlog := map[string]string{"namespace": ns, "queue": "jobs"}
	exp.SetGauge("jobs_backlog", backlog, 0)
	applyPodAutoscaler(ctx, t, ns, []byte(zeroAutoscalerYAML))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 0)
	waitScaledToZero(ctx, t, ns, metav1.ConditionTrue, "ScaledToZero")
	exp.SetGauge("jobs_backlog", backlog, 35) // from zero: ceil(35/10) = 4
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 4)
	waitScaledToZero(ctx, t, ns, metav1.ConditionFalse, "NotScaledToZero")
	exp.SetGauge("jobs_backlog", backlog, 0) // ceil(0/10 × 4) = 0
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 0)
	waitScaledToZero(ctx, t, ns, metav1.ConditionTrue, "ScaledToZero")

	exp.SetGauge("jobs_backlog", backlog, 35)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 4)
	waitScaledToZero(ctx, t, ns, metav1.ConditionFalse, "NotScaledToZero")
	// As kubectl scale does: read the scale and write it back, again on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := cluster.Client.AppsV1().Deployments(ns).GetScale(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 0
		_, err = cluster.Client.AppsV1().Deployments(ns).UpdateScale(ctx, "worker", scale, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("scale worker to 0 as a person: %v", err)
	}
	framework.WaitFor(ctx, t, time.Minute, "a zero set by a person disables scaling", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "zero")
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
		return c != nil && c.Reason == "ScalingDisabled" && pa.Status.CurrentReplicas == 0, describeConditions(pa), nil
	})
	if got, err := cluster.Replicas(ctx, "Deployment", ns, "worker"); err != nil || got != 0 {
		t.Errorf("after a person set 0 with a backlog of 35: %d replicas (%v), want 0", got, err)
	}
}

func waitScaledToZero(ctx context.Context, t *testing.T, ns string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("ScaledToZero=%s %s", status, reason), func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "zero")
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero)
		return c != nil && c.Status == status && c.Reason == reason, describeConditions(pa), nil
	})
}
