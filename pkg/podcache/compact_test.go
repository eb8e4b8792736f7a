package podcache

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
)

func TestCompactKeepsWhatThePodsReadersUseAndNothingElse(t *testing.T) {
	in := podcachetest.FullPod()
	var c Compactor
	got, err := c.Transform(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &Pod{
		Name: in.Name, Namespace: in.Namespace, UID: in.UID, ResourceVersion: in.ResourceVersion,
		Labels: in.Labels, OwnerReferences: in.OwnerReferences, DeletionTimestamp: in.DeletionTimestamp,
		Phase: corev1.PodRunning, StartTime: *in.Status.StartTime,
		Ready: true, ReadyTransition: in.Status.Conditions[1].LastTransitionTime,
		Resources: &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: in.Spec.Resources.Requests},
			Overhead:   in.Spec.Overhead,
			Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: in.Spec.Containers[0].Resources.Requests}}},
			InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: in.Spec.InitContainers[0].RestartPolicy,
				Resources: corev1.ResourceRequirements{Requests: in.Spec.InitContainers[0].Resources.Requests}}},
		}, Status: corev1.PodStatus{
			Resources:             &corev1.ResourceRequirements{Requests: in.Status.Resources.Requests},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", Resources: &corev1.ResourceRequirements{Requests: in.Status.ContainerStatuses[0].Resources.Requests}}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", Resources: &corev1.ResourceRequirements{Requests: in.Status.InitContainerStatuses[0].Resources.Requests}}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("compact pod (-want +got):\n%s", diff)
	}
	again, _ := c.Transform(got)
	if again != got {
		t.Error("the transform does not pass a compact pod through")
	}
}

func TestCompactReadsTheReadyConditionAndStartTimeWhenThereAreNone(t *testing.T) {
	tests := []struct {
		name       string
		conditions []corev1.PodCondition
		wantReady  bool
	}{
		{"no Ready condition is not ready", []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}, false},
		{"Ready Unknown is not ready", []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionUnknown}}, false},
		{"Ready False is not ready", []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}, false},
		{"Ready True is ready", []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Compactor
			got := c.Compact(&corev1.Pod{Status: corev1.PodStatus{Conditions: tt.conditions}})
			if got.Ready != tt.wantReady || !got.StartTime.IsZero() {
				t.Errorf("ready %v, start %v; want ready %v and a zero start", got.Ready, got.StartTime, tt.wantReady)
			}
		})
	}
}

func TestPodsOfOneWorkloadShareTheirLabelsOwnersAndRequests(t *testing.T) {
	var c Compactor
	a, b := podcachetest.FullPod(), podcachetest.FullPod()
	b.Name, b.UID = "p2", "u2"
	// b is decoded separately: equal content, distinct maps and slices.
	b.Labels = map[string]string{"app": "vg1"}
	b.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "vg1-abc", UID: "rs1", Controller: ptr.To(true)}}
	b.Spec.Containers[0].Resources.Requests = b.Spec.Containers[0].Resources.Requests.DeepCopy()
	sa, sb := c.Compact(a), c.Compact(b)
	if !sameMap(sa.Labels, sb.Labels) || &sa.OwnerReferences[0] != &sb.OwnerReferences[0] || sa.Resources != sb.Resources {
		t.Error("equal labels, owners or requests of two pods are not shared")
	}
	b.Labels = map[string]string{"app": "other"}
	b.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	sc := c.Compact(b)
	if sameMap(sa.Labels, sc.Labels) || sa.Resources == sc.Resources {
		t.Error("different labels or requests are shared")
	}
}

func TestCompactKeepsTheRequestsInEffectAndTheResizeConditions(t *testing.T) {
	in := podcachetest.FullPod()
	big := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	in.Spec.Containers[0].Resources.Requests = big // resized in the spec, not yet in effect
	in.Status.Resize = corev1.PodResizeStatusInProgress
	in.Status.Conditions = append(in.Status.Conditions,
		corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, Reason: "", Message: "long text", LastTransitionTime: metav1.Now()},
		corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible, Message: "node has 1 cpu"})
	var c Compactor
	got := c.Compact(in).Resources
	want := corev1.PodStatus{
		Resources:             &corev1.ResourceRequirements{Requests: in.Status.Resources.Requests},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", Resources: &corev1.ResourceRequirements{Requests: in.Status.ContainerStatuses[0].Resources.Requests}}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", Resources: &corev1.ResourceRequirements{Requests: in.Status.InitContainerStatuses[0].Resources.Requests}}},
		Resize:                corev1.PodResizeStatusInProgress,
		Conditions: []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue},
			{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}},
	}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("status kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(big, got.Spec.Containers[0].Resources.Requests); diff != "" {
		t.Errorf("spec requests kept (-want +got):\n%s", diff)
	}
}

func TestPodsShareAShapeOnlyWithEqualRequestsInEffectAndResizeConditions(t *testing.T) {
	var c Compactor
	base := c.Compact(podcachetest.FullPod()).Resources
	tests := []struct {
		name   string
		change func(p *corev1.Pod)
		shared bool
	}{
		{"a pod of the same shape, its conditions' times and messages aside, shares it", func(p *corev1.Pod) {
			p.Status.Conditions[1].Message = "other"
			p.Status.ContainerStatuses[0].RestartCount = 7
		}, true},
		{"other requests in effect of a container are another shape", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"other requests in effect of a sidecar are another shape", func(p *corev1.Pod) {
			p.Status.InitContainerStatuses[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"another overhead is another shape", func(p *corev1.Pod) { p.Spec.Overhead = nil }, false},
		{"other pod-level requests in effect are another shape", func(p *corev1.Pod) {
			p.Status.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"a resize in progress is another shape", func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue})
		}, false},
		{"a pending resize's reason is part of the shape", func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := podcachetest.FullPod()
			tt.change(p)
			if got := c.Compact(p).Resources == base; got != tt.shared {
				t.Errorf("shared %v, want %v", got, tt.shared)
			}
		})
	}
}

func TestASharedValuesTableStartsOverWhenFull(t *testing.T) {
	var s shared[int]
	for i := range maxShared + 1 {
		s.intern(fmt.Sprint(i), func() int { return i })
	}
	if len(s.values) != 1 {
		t.Errorf("table holds %d values after overflowing, want 1 (it starts over)", len(s.values))
	}
}

func TestCompactPodsAreReadLikeAnyCachedObject(t *testing.T) {
	var c Compactor
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	a, b := podcachetest.FullPod(), podcachetest.FullPod()
	b.Name, b.Labels = "p2", map[string]string{"app": "other"}
	other := podcachetest.FullPod()
	other.Namespace = "elsewhere"
	for _, p := range []*corev1.Pod{a, b, other} {
		if err := idx.Add(c.Compact(p)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := NewLister(idx).List("ns", labels.SelectorFromSet(labels.Set{"app": "vg1"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "p1" {
		t.Errorf("lister selected %v, want ns/p1", got)
	}
	generic, err := cache.NewGenericLister(idx, corev1.Resource("pods")).ByNamespace("ns").List(labels.Everything())
	if err != nil || len(generic) != 2 {
		t.Errorf("generic lister listed %d pods of ns (%v), want 2", len(generic), err)
	}
}

func TestOfCompactsAPodOfACacheWithoutTheTransform(t *testing.T) {
	var c Compactor
	in := podcachetest.FullPod()
	want := c.Compact(in)
	got, ok := Of(in)
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("Of (-want +got):\n%s", diff)
	}
	if _, ok := Of(&corev1.Node{}); ok {
		t.Error("Of accepted a node")
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	var c Compactor
	p := c.Compact(podcachetest.FullPod())
	cp := p.DeepCopy()
	if diff := cmp.Diff(p, cp); diff != "" {
		t.Errorf("copy differs (-orig +copy):\n%s", diff)
	}
	cp.Labels["app"] = "changed"
	cp.OwnerReferences[0].Name = "changed"
	cp.Resources.Spec.Containers[0].Name = "changed"
	if p.Labels["app"] != "vg1" || p.OwnerReferences[0].Name != "vg1-abc" || p.Resources.Spec.Containers[0].Name != "app" {
		t.Error("changing the copy changed the original")
	}
}

// sameMap reports whether a and b are the same map instance.
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
