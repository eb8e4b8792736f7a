package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// podsOf converts the target's pods to the calculator's view.
func podsOf(pods []*corev1.Pod) []replicas.Pod {
	out := make([]replicas.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, podOf(p))
	}
	return out
}

func podOf(p *corev1.Pod) replicas.Pod {
	out := replicas.Pod{
		Name:     p.Name,
		Deleted:  p.DeletionTimestamp != nil,
		Phase:    p.Status.Phase,
		Requests: requestsOf(p),
	}
	if p.Status.StartTime != nil {
		out.Start = p.Status.StartTime.Time
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Ready = c.Status == corev1.ConditionTrue
			out.ReadyTransition = c.LastTransitionTime.Time
			break
		}
	}
	return out
}

// requestsOf returns the pod's cpu and memory requests in milli-units: the pod-level request
// when set, otherwise the sum over its containers, absent when any container lacks it.
func requestsOf(p *corev1.Pod) map[corev1.ResourceName]int64 {
	out := make(map[corev1.ResourceName]int64, 2)
	for _, r := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if p.Spec.Resources != nil {
			if q, ok := p.Spec.Resources.Requests[r]; ok {
				out[r] = q.MilliValue()
				continue
			}
		}
		sum, complete := int64(0), len(p.Spec.Containers) > 0
		for _, c := range p.Spec.Containers {
			q, ok := c.Resources.Requests[r]
			if !ok {
				complete = false
				break
			}
			sum += q.MilliValue()
		}
		if complete {
			out[r] = sum
		}
	}
	return out
}
