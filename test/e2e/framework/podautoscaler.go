package framework

import (
	"fmt"
	"testing"
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// PodAutoscalerYAML is a PodAutoscaler named name scaling the workload kind/target between
// minReplicas and maxReplicas; spec is more YAML indented under spec (its metrics, a behavior).
func PodAutoscalerYAML(name, kind, target string, minReplicas, maxReplicas int, spec string) []byte {
	return fmt.Appendf(nil, `apiVersion: autoscaling.podpilot.io/v1alpha1
kind: PodAutoscaler
metadata: {name: %s}
spec:
  scaleTargetKind: %s
  scaleTargetName: %s
  minReplicas: %d
  maxReplicas: %d
%s`, name, kind, target, minReplicas, maxReplicas, spec)
}

// LastRecommendedAbove returns when a recommendation above replicas was last made, as the
// history checkpointed in status (recs) dates it: a downscale stabilization window that holds
// such a recommendation ends window after it, as upstream counts it from the last round that
// made it (which may precede the moment a test changed the load by up to a sync period: that
// round read the load before the change). It fails the test when recs hold none.
func LastRecommendedAbove(t *testing.T, recs []podpilotv1alpha1.Recommendation, replicas int32) time.Time {
	t.Helper()
	var last time.Time
	for _, r := range recs {
		if r.Replicas > replicas && r.Timestamp.After(last) {
			last = r.Timestamp.Time
		}
	}
	if last.IsZero() {
		t.Fatalf("no recommendation above %d checkpointed in status: %v", replicas, recs)
	}
	return last
}
