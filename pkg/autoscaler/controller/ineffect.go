package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// containerRequest returns the request for r in effect of the pod's container c (a regular or an
// init container): the request its status reports (status.containerStatuses[] or
// status.initContainerStatuses[] resources.requests, which the kubelet updates when an in-place
// resize has been actuated), else the spec's. False when the spec has no request for r: a
// container lacks a request as upstream reads it, from the spec.
func containerRequest(p *corev1.Pod, c *corev1.Container, r corev1.ResourceName) (resource.Quantity, bool) {
	q, ok := c.Resources.Requests[r]
	if !ok {
		return q, false
	}
	for _, list := range [...][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i := range list {
			if st := &list[i]; st.Name == c.Name && st.Resources != nil {
				if inEffect, reported := st.Resources.Requests[r]; reported {
					return inEffect, true
				}
			}
		}
	}
	return q, true
}

// podRequest is the pod-level request for r in effect, if the pod sets one in spec.resources:
// while a resize of the pod is in flight, status.resources' request if reported, else the spec's.
// At rest the two are the same request, but the kubelet reports the pod's cgroup, which rounds
// (on cgroup v2 1 cpu reads 975m); and it includes the overhead (kubernetes#139627), which
// upstream excludes from the request (kubernetes#142154), so a pod with an overhead for r reads
// the spec's.
func podRequest(p *corev1.Pod, r corev1.ResourceName) (resource.Quantity, bool) {
	if p.Spec.Resources == nil {
		return resource.Quantity{}, false
	}
	q, ok := p.Spec.Resources.Requests[r]
	if !ok {
		return q, false
	}
	if _, overhead := p.Spec.Overhead[r]; overhead || p.Status.Resources == nil || !resizing(p) {
		return q, true
	}
	if inEffect, reported := p.Status.Resources.Requests[r]; reported {
		return inEffect, true
	}
	return q, true
}

// resizing reports whether an in-place resize of the pod is in flight: its PodResizePending
// condition (Deferred or Infeasible) or PodResizeInProgress condition is True, or, from a
// kubelet older than 1.33, its deprecated status.resize is set.
func resizing(p *corev1.Pod) bool {
	if p.Status.Resize != "" {
		return true
	}
	for _, c := range p.Status.Conditions {
		if (c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
