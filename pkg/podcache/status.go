package podcache

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// inEffectOnly keeps of a pod's status what the autoscaler reads of an in-place resize: the
// pod-level requests in effect (status.resources), each container status's and init container
// status's name and requests in effect (its resources.requests), the PodResizePending and
// PodResizeInProgress conditions (type, status and reason: no times or messages, which would
// make every pod's shape its own) and the deprecated status.resize.
func inEffectOnly(s *corev1.PodStatus) corev1.PodStatus {
	out := corev1.PodStatus{
		InitContainerStatuses: statusRequestsOnly(s.InitContainerStatuses),
		ContainerStatuses:     statusRequestsOnly(s.ContainerStatuses),
		Resize:                s.Resize,
	}
	if s.Resources != nil && len(s.Resources.Requests) > 0 {
		out.Resources = &corev1.ResourceRequirements{Requests: s.Resources.Requests}
	}
	for _, c := range s.Conditions {
		if isResizeCondition(c.Type) {
			out.Conditions = append(out.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
	}
	return out
}

// isResizeCondition reports whether t is one of the conditions of an in-place resize.
func isResizeCondition(t corev1.PodConditionType) bool {
	return t == corev1.PodResizePending || t == corev1.PodResizeInProgress
}

// statusRequestsOnly keeps the name and requests in effect of each container status that
// reports requests.
func statusRequestsOnly(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, st := range cs {
		if hasRequests(st) {
			out = append(out, corev1.ContainerStatus{Name: st.Name, Resources: &corev1.ResourceRequirements{Requests: st.Resources.Requests}})
		}
	}
	return out
}

// hasRequests reports whether st reports requests in effect.
func hasRequests(st corev1.ContainerStatus) bool {
	return st.Resources != nil && len(st.Resources.Requests) > 0
}

// writeStatusKey writes, in a canonical form, what inEffectOnly keeps of s.
func writeStatusKey(key *strings.Builder, s *corev1.PodStatus) {
	key.WriteString("||")
	if s.Resources != nil {
		writeRequests(key, s.Resources.Requests)
	}
	for _, list := range [...][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		key.WriteString("|")
		for _, st := range list {
			if hasRequests(st) {
				key.WriteString(st.Name + "/")
				writeRequests(key, st.Resources.Requests)
			}
		}
	}
	key.WriteString("|" + string(s.Resize) + "|")
	for _, c := range s.Conditions {
		if isResizeCondition(c.Type) {
			key.WriteString(string(c.Type) + "=" + string(c.Status) + "/" + c.Reason + ";")
		}
	}
}
