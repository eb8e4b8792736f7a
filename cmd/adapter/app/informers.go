package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
)

// clusterInformers is podpilot's one cache of the cluster, shared by the metrics APIs and the
// autoscaler: a typed factory (pods, deployments, statefulsets, replicasets,
// horizontalpodautoscalers) and a metadata-only factory
// (every other resource a custom metric names, and nodes). Pods are cached once, typed, for
// every reader. Every object is stripped by a transform to the fields its readers use.
type clusterInformers struct {
	kube     kubeinformers.SharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	shared   sharedValues
}

var _ metricsapi.Informers = (*clusterInformers)(nil)

// newClusterInformers builds the factories; nothing runs before Start.
func newClusterInformers(cfg *rest.Config) (*clusterInformers, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build kubernetes client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build metadata client: %w", err)
	}
	c := &clusterInformers{}
	c.kube = kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTransform(c.stripTyped))
	c.metadata = metadatainformer.NewSharedInformerFactoryWithOptions(meta, 0, metadatainformer.WithTransform(stripMetadata))
	return c, nil
}

// podsResource is the resource every reader of pods shares.
func podsResource() schema.GroupVersionResource {
	return corev1.SchemeGroupVersion.WithResource("pods")
}

// ForResource implements metricsapi.Informers: pods come from the typed factory (the
// autoscaler's pods), every other resource from the metadata factory.
func (c *clusterInformers) ForResource(gvr schema.GroupVersionResource) kubeinformers.GenericInformer {
	if gvr == podsResource() {
		if inf, err := c.kube.ForResource(gvr); err == nil {
			return inf
		}
	}
	return c.metadata.ForResource(gvr)
}

// Start implements metricsapi.Informers: it starts every informer asked for so far.
func (c *clusterInformers) Start(stopCh <-chan struct{}) {
	c.kube.Start(stopCh)
	c.metadata.Start(stopCh)
}

// StartWithContext is Start with ctx's logger.
func (c *clusterInformers) StartWithContext(ctx context.Context) {
	c.kube.StartWithContext(ctx)
	c.metadata.Start(ctx.Done())
}

// Shutdown waits for every informer to stop; the contexts they were started with must be done.
func (c *clusterInformers) Shutdown() {
	c.kube.Shutdown()
	c.metadata.Shutdown()
}

// stripTyped strips the typed factory's objects: pods to what the autoscaler and the metrics
// APIs read (stripPod), ReplicaSets and HorizontalPodAutoscalers to what the autoscaler reads
// (stripReplicaSet, stripHPA), everything else of its managed fields.
func (c *clusterInformers) stripTyped(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return c.stripPod(o), nil
	case *appsv1.ReplicaSet:
		return c.stripReplicaSet(o), nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		return stripHPA(o), nil
	}
	if m, err := apimeta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// stripReplicaSet keeps what the autoscaler's ownership chain (Deployment → ReplicaSet → Pod)
// reads: name, namespace, UID and owners.
func (c *clusterInformers) stripReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: rs.Name, Namespace: unique.Make(rs.Namespace).Value(), UID: rs.UID, ResourceVersion: rs.ResourceVersion,
		OwnerReferences: c.shared.ownerList(rs.OwnerReferences),
	}}
}

// stripHPA keeps what the autoscaler's two-autoscalers rule reads: name, namespace and the
// scale target.
func stripHPA(h *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: unique.Make(h.Namespace).Value(), UID: h.UID, ResourceVersion: h.ResourceVersion},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: h.Spec.ScaleTargetRef},
	}
}

// stripPod keeps what the pod's readers use: name, namespace, labels and owners (selectors,
// object names); deletion timestamp, phase, start time and the Ready condition (the
// autoscaler's readiness rules); the pod-level, container and init-container (sidecar)
// requests. It drops managedFields, annotations, env, volumes, images, probes, limits,
// container statuses and the rest. Strings are interned, and equal request lists, label maps
// and owner lists shared, since the pods of one workload repeat them.
func (c *clusterInformers) stripPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              p.Name,
			Namespace:         unique.Make(p.Namespace).Value(),
			UID:               p.UID,
			ResourceVersion:   p.ResourceVersion,
			Labels:            c.shared.labelSet(p.Labels),
			OwnerReferences:   c.shared.ownerList(p.OwnerReferences),
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{
			Containers:     c.stripContainers(p.Spec.Containers),
			InitContainers: c.stripContainers(p.Spec.InitContainers),
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase, StartTime: p.Status.StartTime},
	}
	if p.Spec.Resources != nil {
		out.Spec.Resources = &corev1.ResourceRequirements{Requests: c.shared.requestList(p.Spec.Resources.Requests)}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			out.Status.Conditions = []corev1.PodCondition{{Type: cond.Type, Status: cond.Status, LastTransitionTime: cond.LastTransitionTime}}
			break
		}
	}
	return out
}

// stripContainers keeps each container's name, restart policy (a restartable init container is
// a sidecar) and requests.
func (c *clusterInformers) stripContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, ctr := range cs {
		out[i] = corev1.Container{Name: unique.Make(ctr.Name).Value(), RestartPolicy: ctr.RestartPolicy,
			Resources: corev1.ResourceRequirements{Requests: c.shared.requestList(ctr.Resources.Requests)}}
	}
	return out
}

// maxSharedValues bounds each table of shared values; a full table starts over (objects keep
// the values they hold), so that values of objects long gone are not kept forever.
const maxSharedValues = 4096

// shared hands out one instance of equal values (request lists, label maps, owner lists) to the
// cached pods: the pods of one workload repeat them. Listers hand out shared, read-only
// objects, so sharing is safe.
type shared[T any] struct {
	mu     sync.Mutex
	values map[string]T
}

// intern returns the shared value with key, storing v under it if there is none.
func (s *shared[T]) intern(key string, v T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.values[key]; ok {
		return got
	}
	if s.values == nil || len(s.values) >= maxSharedValues {
		s.values = map[string]T{}
	}
	s.values[key] = v
	return v
}

// sharedValues are the tables of the values pods share.
type sharedValues struct {
	requests shared[corev1.ResourceList]
	labels   shared[map[string]string]
	owners   shared[[]metav1.OwnerReference]
}

// requestList returns the shared request list equal to rl.
func (s *sharedValues) requestList(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return nil
	}
	var key strings.Builder
	for _, name := range sortedKeys(rl) {
		q := rl[name]
		key.WriteString(string(name) + "=" + q.String() + ";")
	}
	return s.requests.intern(key.String(), rl)
}

// labelSet returns the shared label map equal to labels.
func (s *sharedValues) labelSet(labels map[string]string) map[string]string {
	if labels == nil {
		return nil
	}
	var key strings.Builder
	for _, k := range sortedKeys(labels) {
		key.WriteString(k + "\x00" + labels[k] + "\x00")
	}
	return s.labels.intern(key.String(), labels)
}

// ownerList returns the shared owner list equal to owners (by their UIDs and controller flag).
func (s *sharedValues) ownerList(owners []metav1.OwnerReference) []metav1.OwnerReference {
	if len(owners) == 0 {
		return nil
	}
	var key strings.Builder
	for _, o := range owners {
		key.WriteString(string(o.UID) + "/" + o.Kind + "/" + o.Name + "/" + fmt.Sprint(o.Controller != nil && *o.Controller) + ";")
	}
	return s.owners.intern(key.String(), owners)
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

// stripMetadata keeps what selector resolution needs (name, namespace, labels), to bound the
// metadata cache's memory.
func stripMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            m.Name,
			Namespace:       m.Namespace,
			UID:             m.UID,
			ResourceVersion: m.ResourceVersion,
			Labels:          m.Labels,
		},
	}, nil
}
