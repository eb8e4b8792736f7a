package podcache

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Pod is a cached pod: its identity, labels and owners (selectors, object names, ownership), its
// creation and deletion timestamps, phase, start time and Ready condition (the autoscaler's readiness rules),
// and a shared pod holding only its resource shape (requests in the spec and in effect, resize
// conditions). It is a metav1.Object and a runtime.Object,
// so the informer's indexers and generic listers read it like any cached object; the setters of
// fields it does not keep do nothing. Cached pods are shared and read-only.
type Pod struct {
	Name            string
	Namespace       string
	UID             types.UID
	ResourceVersion string
	// Labels and OwnerReferences are shared with the pods that have equal ones.
	Labels            map[string]string
	OwnerReferences   []metav1.OwnerReference
	DeletionTimestamp *metav1.Time
	// CreationTimestamp is metadata.creationTimestamp: with ReadyTransition, how long the pod
	// took from its creation to Ready (the autoscaler's lead time).
	CreationTimestamp metav1.Time
	Phase             corev1.PodPhase
	// StartTime is status.startTime, zero when unset.
	StartTime metav1.Time
	// ReadyTransition is the Ready condition's last transition, zero without the condition.
	ReadyTransition metav1.Time
	// Resources holds, of the pod, only spec.resources' requests, spec.overhead and each
	// container's and init container's name, restart policy and requests; of its status, status.resources' requests,
	// each container status's name and resources.requests (the requests in effect after an
	// in-place resize), the PodResizePending and PodResizeInProgress conditions' type, status and
	// reason, and status.resize. It is shared with the pods whose are equal.
	Resources *corev1.Pod
	// Ready is whether the Ready condition's status is True.
	Ready bool
}

var (
	_ metav1.Object  = (*Pod)(nil)
	_ runtime.Object = (*Pod)(nil)
)

// GetObjectKind implements runtime.Object: a cached pod carries no type metadata.
func (p *Pod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (p *Pod) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopy returns a copy of p that shares nothing with it.
func (p *Pod) DeepCopy() *Pod {
	if p == nil {
		return nil
	}
	out := *p
	out.Labels = maps.Clone(p.Labels)
	if p.OwnerReferences != nil {
		out.OwnerReferences = make([]metav1.OwnerReference, len(p.OwnerReferences))
		for i := range p.OwnerReferences {
			p.OwnerReferences[i].DeepCopyInto(&out.OwnerReferences[i])
		}
	}
	out.DeletionTimestamp = p.DeletionTimestamp.DeepCopy()
	p.CreationTimestamp.DeepCopyInto(&out.CreationTimestamp)
	p.StartTime.DeepCopyInto(&out.StartTime)
	p.ReadyTransition.DeepCopyInto(&out.ReadyTransition)
	out.Resources = p.Resources.DeepCopy()
	return &out
}

// GetName implements metav1.Object.
func (p *Pod) GetName() string { return p.Name }

// SetName implements metav1.Object.
func (p *Pod) SetName(name string) { p.Name = name }

// GetNamespace implements metav1.Object.
func (p *Pod) GetNamespace() string { return p.Namespace }

// SetNamespace implements metav1.Object.
func (p *Pod) SetNamespace(namespace string) { p.Namespace = namespace }

// GetUID implements metav1.Object.
func (p *Pod) GetUID() types.UID { return p.UID }

// SetUID implements metav1.Object.
func (p *Pod) SetUID(uid types.UID) { p.UID = uid }

// GetResourceVersion implements metav1.Object.
func (p *Pod) GetResourceVersion() string { return p.ResourceVersion }

// SetResourceVersion implements metav1.Object.
func (p *Pod) SetResourceVersion(version string) { p.ResourceVersion = version }

// GetLabels implements metav1.Object.
func (p *Pod) GetLabels() map[string]string { return p.Labels }

// SetLabels implements metav1.Object.
func (p *Pod) SetLabels(labels map[string]string) { p.Labels = labels }

// GetOwnerReferences implements metav1.Object.
func (p *Pod) GetOwnerReferences() []metav1.OwnerReference { return p.OwnerReferences }

// SetOwnerReferences implements metav1.Object.
func (p *Pod) SetOwnerReferences(refs []metav1.OwnerReference) { p.OwnerReferences = refs }

// GetDeletionTimestamp implements metav1.Object.
func (p *Pod) GetDeletionTimestamp() *metav1.Time { return p.DeletionTimestamp }

// SetDeletionTimestamp implements metav1.Object.
func (p *Pod) SetDeletionTimestamp(t *metav1.Time) { p.DeletionTimestamp = t }

// GetGenerateName implements metav1.Object; a cached pod does not keep it.
func (p *Pod) GetGenerateName() string { return "" }

// SetGenerateName implements metav1.Object; a cached pod does not keep it.
func (p *Pod) SetGenerateName(string) {}

// GetGeneration implements metav1.Object; a cached pod does not keep it.
func (p *Pod) GetGeneration() int64 { return 0 }

// SetGeneration implements metav1.Object; a cached pod does not keep it.
func (p *Pod) SetGeneration(int64) {}

// GetSelfLink implements metav1.Object; a cached pod does not keep it.
func (p *Pod) GetSelfLink() string { return "" }

// SetSelfLink implements metav1.Object; a cached pod does not keep it.
func (p *Pod) SetSelfLink(string) {}

// GetCreationTimestamp implements metav1.Object.
func (p *Pod) GetCreationTimestamp() metav1.Time { return p.CreationTimestamp }

// SetCreationTimestamp implements metav1.Object.
func (p *Pod) SetCreationTimestamp(t metav1.Time) { p.CreationTimestamp = t }

// GetDeletionGracePeriodSeconds implements metav1.Object; a cached pod does not keep it.
func (p *Pod) GetDeletionGracePeriodSeconds() *int64 { return nil }

// SetDeletionGracePeriodSeconds implements metav1.Object; a cached pod does not keep it.
func (p *Pod) SetDeletionGracePeriodSeconds(*int64) {}

// GetAnnotations implements metav1.Object; a cached pod does not keep them.
func (p *Pod) GetAnnotations() map[string]string { return nil }

// SetAnnotations implements metav1.Object; a cached pod does not keep them.
func (p *Pod) SetAnnotations(map[string]string) {}

// GetFinalizers implements metav1.Object; a cached pod does not keep them.
func (p *Pod) GetFinalizers() []string { return nil }

// SetFinalizers implements metav1.Object; a cached pod does not keep them.
func (p *Pod) SetFinalizers([]string) {}

// GetManagedFields implements metav1.Object; a cached pod does not keep them.
func (p *Pod) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }

// SetManagedFields implements metav1.Object; a cached pod does not keep them.
func (p *Pod) SetManagedFields([]metav1.ManagedFieldsEntry) {}
