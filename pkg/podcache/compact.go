package podcache

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Compactor makes the cached pods of one cache: its tables hand out one instance of the label
// maps, owner lists and resource shapes that the pods of a workload repeat. The zero value is
// ready to use; it is safe for concurrent use.
type Compactor struct {
	labels shared[map[string]string]
	owners shared[[]metav1.OwnerReference]
	shapes shared[*corev1.Pod]
}

// Transform is an informer transform: it compacts a *corev1.Pod and passes anything else through.
func (c *Compactor) Transform(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		return c.Compact(p), nil
	}
	return obj, nil
}

// Compact returns the cached form of p. Strings are interned, and equal label maps, owner lists
// and resource shapes (requests in the spec and in effect, resize conditions) shared; p itself is
// not kept.
func (c *Compactor) Compact(p *corev1.Pod) *Pod {
	out := &Pod{
		Name:              p.Name,
		Namespace:         unique.Make(p.Namespace).Value(),
		UID:               p.UID,
		ResourceVersion:   p.ResourceVersion,
		Labels:            c.Labels(p.Labels),
		OwnerReferences:   c.Owners(p.OwnerReferences),
		DeletionTimestamp: p.DeletionTimestamp,
		CreationTimestamp: p.CreationTimestamp,
		Phase:             unique.Make(p.Status.Phase).Value(),
		Resources:         c.resources(p),
	}
	if p.Status.StartTime != nil {
		out.StartTime = *p.Status.StartTime
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			out.Ready = cond.Status == corev1.ConditionTrue
			out.ReadyTransition = cond.LastTransitionTime
			break
		}
	}
	return out
}

// Of returns the cached pod obj is: obj itself, or a *corev1.Pod compacted now (a cache built
// without Transform). False for anything else.
func Of(obj any) (*Pod, bool) {
	switch o := obj.(type) {
	case *Pod:
		return o, true
	case *corev1.Pod:
		var c Compactor
		return c.Compact(o), true
	}
	return nil, false
}

// Labels returns the shared label map equal to labels.
func (c *Compactor) Labels(labels map[string]string) map[string]string {
	if labels == nil {
		return nil
	}
	var key strings.Builder
	for _, k := range sortedKeys(labels) {
		key.WriteString(k + "\x00" + labels[k] + "\x00")
	}
	return c.labels.intern(key.String(), func() map[string]string { return labels })
}

// Owners returns the shared owner list equal to owners (by their UIDs, kinds, names and
// controller flags).
func (c *Compactor) Owners(owners []metav1.OwnerReference) []metav1.OwnerReference {
	if len(owners) == 0 {
		return nil
	}
	var key strings.Builder
	for _, o := range owners {
		key.WriteString(string(o.UID) + "/" + o.Kind + "/" + o.Name + "/" + strconv.FormatBool(o.Controller != nil && *o.Controller) + ";")
	}
	return c.owners.intern(key.String(), func() []metav1.OwnerReference { return slices.Clip(owners) })
}

// resources returns the shared pod holding only what the autoscaler reads of p's resources:
// spec.resources' requests, spec.overhead, each container's and init container's name, restart
// policy and requests, and of the status the requests in effect (status.resources' and each container
// status's name and requests) and the resize conditions (see inEffectOnly). Pods of one shape
// share one.
func (c *Compactor) resources(p *corev1.Pod) *corev1.Pod {
	spec := &p.Spec
	var key strings.Builder
	if spec.Resources != nil {
		writeRequests(&key, spec.Resources.Requests)
	}
	key.WriteString("+")
	writeRequests(&key, spec.Overhead)
	for _, list := range [...][]corev1.Container{spec.InitContainers, spec.Containers} {
		key.WriteString("|")
		for _, ctr := range list {
			key.WriteString(ctr.Name + "/")
			if ctr.RestartPolicy != nil {
				key.WriteString(string(*ctr.RestartPolicy))
			}
			key.WriteString("/")
			writeRequests(&key, ctr.Resources.Requests)
		}
	}
	writeStatusKey(&key, &p.Status)
	return c.shapes.intern(key.String(), func() *corev1.Pod {
		out := &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: requestsOnly(spec.InitContainers),
			Containers:     requestsOnly(spec.Containers),
			Overhead:       spec.Overhead,
		}, Status: inEffectOnly(&p.Status)}
		if spec.Resources != nil {
			out.Spec.Resources = &corev1.ResourceRequirements{Requests: spec.Resources.Requests}
		}
		return out
	})
}

// requestsOnly keeps each container's name, restart policy and requests.
func requestsOnly(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, ctr := range cs {
		out[i] = corev1.Container{Name: ctr.Name, RestartPolicy: ctr.RestartPolicy,
			Resources: corev1.ResourceRequirements{Requests: ctr.Resources.Requests}}
	}
	return out
}

// writeRequests writes rl in a canonical form.
func writeRequests(key *strings.Builder, rl corev1.ResourceList) {
	for _, name := range sortedKeys(rl) {
		q := rl[name]
		key.WriteString(string(name) + "=" + q.String() + ";")
	}
}

// maxShared bounds each table of shared values; a full table starts over (objects keep the
// values they hold), so that values of objects long gone are not kept forever.
const maxShared = 4096

// shared hands out one instance of equal values.
type shared[T any] struct {
	mu     sync.Mutex
	values map[string]T
}

// intern returns the shared value with key, storing build's value under it if there is none.
func (s *shared[T]) intern(key string, build func() T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.values[key]; ok {
		return got
	}
	if s.values == nil || len(s.values) >= maxShared {
		s.values = map[string]T{}
	}
	v := build()
	s.values[key] = v
	return v
}

// sortedKeys returns m's keys in order.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
