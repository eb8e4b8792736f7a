package framework

import "fmt"

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
