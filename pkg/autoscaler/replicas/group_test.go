package replicas

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var now = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

// runningPod is a pod started 10 minutes ago (past the cpu initialization period) and ready for 9.
func runningPod(name string, request int64) Pod {
	return Pod{
		Name:            name,
		Phase:           corev1.PodRunning,
		Ready:           true,
		Start:           now.Add(-10 * time.Minute),
		ReadyTransition: now.Add(-9 * time.Minute),
		Requests:        map[corev1.ResourceName]int64{corev1.ResourceCPU: request, corev1.ResourceMemory: request},
	}
}

// podsWithRequests returns running pods pod-0…pod-n with the given requests.
func podsWithRequests(requests ...int64) []Pod {
	pods := make([]Pod, len(requests))
	for i, r := range requests {
		pods[i] = runningPod(fmt.Sprintf("pod-%d", i), r)
	}
	return pods
}

// samplesOf returns fresh samples for pod-0…pod-n.
func samplesOf(values ...int64) map[string]Sample {
	s := make(map[string]Sample, len(values))
	for i, v := range values {
		s[fmt.Sprintf("pod-%d", i)] = Sample{Value: v, Timestamp: now, Window: time.Minute}
	}
	return s
}

func with(p Pod, change func(*Pod)) Pod {
	change(&p)
	return p
}

func TestGroupPods(t *testing.T) {
	type grouped struct {
		Ready   map[string]int64
		Missing []string
		Ignored []string
	}
	recentStart := func(p *Pod) { p.Start = now.Add(-time.Minute) }
	tests := []struct {
		name     string
		pods     []Pod
		samples  map[string]Sample
		resource corev1.ResourceName
		want     grouped
	}{{
		name:    "deleted, failed and succeeded pods are discarded",
		pods:    []Pod{runningPod("a", 1), with(runningPod("b", 1), func(p *Pod) { p.Deleted = true }), with(runningPod("c", 1), func(p *Pod) { p.Phase = corev1.PodFailed }), with(runningPod("d", 1), func(p *Pod) { p.Phase = corev1.PodSucceeded })},
		samples: map[string]Sample{"a": {Value: 1, Timestamp: now}, "b": {Value: 2, Timestamp: now}, "c": {Value: 3, Timestamp: now}},
		want:    grouped{Ready: map[string]int64{"a": 1}},
	}, {
		name:    "pods without a sample are missing",
		pods:    []Pod{runningPod("a", 1), runningPod("b", 1)},
		samples: map[string]Sample{"a": {Value: 1, Timestamp: now}},
		want:    grouped{Ready: map[string]int64{"a": 1}, Missing: []string{"b"}},
	}, {
		name:    "pending pods are ignored for every metric, like upstream",
		pods:    []Pod{runningPod("a", 1), with(runningPod("b", 1), func(p *Pod) { p.Phase = corev1.PodPending })},
		samples: map[string]Sample{"a": {Value: 1, Timestamp: now}, "b": {Value: 5, Timestamp: now}},
		want:    grouped{Ready: map[string]int64{"a": 1}, Ignored: []string{"b"}},
	}, {
		name:     "readiness does not matter for memory",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { p.Ready = false; p.ReadyTransition = p.Start })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now}},
		resource: corev1.ResourceMemory,
		want:     grouped{Ready: map[string]int64{"a": 1}},
	}, {
		name:     "cpu: a pod without a Ready condition is ignored",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { p.ReadyTransition = time.Time{} })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{}, Ignored: []string{"a"}},
	}, {
		name:     "cpu: past initialization, a pod that has never been ready is ignored",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { p.Ready = false; p.ReadyTransition = p.Start.Add(10 * time.Second) })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{}, Ignored: []string{"a"}},
	}, {
		name:     "cpu: past initialization, a pod that was ready before and became unready counts",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { p.Ready = false; p.ReadyTransition = now.Add(-time.Minute) })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{"a": 1}},
	}, {
		name:     "cpu: within initialization, an unready pod is ignored",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { recentStart(p); p.Ready = false; p.ReadyTransition = p.Start })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{}, Ignored: []string{"a"}},
	}, {
		name:     "cpu: within initialization, a sample whose window began before readiness is ignored",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { recentStart(p); p.ReadyTransition = now.Add(-30 * time.Second) })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now, Window: time.Minute}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{}, Ignored: []string{"a"}},
	}, {
		name:     "cpu: within initialization, a sample taken a full window after readiness counts",
		pods:     []Pod{with(runningPod("a", 1), func(p *Pod) { recentStart(p); p.ReadyTransition = now.Add(-2 * time.Minute) })},
		samples:  map[string]Sample{"a": {Value: 1, Timestamp: now, Window: time.Minute}},
		resource: corev1.ResourceCPU,
		want:     grouped{Ready: map[string]int64{"a": 1}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := groupPods(tc.pods, tc.samples, tc.resource, DefaultConfig(), now)
			got := grouped{Ready: g.ready, Missing: g.missing, Ignored: g.ignored}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groupPods() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
