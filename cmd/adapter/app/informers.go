package app

import (
	"context"
	"fmt"

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
// autoscaler: a typed factory (pods, deployments, statefulsets) and a metadata-only factory
// (every other resource a custom metric names, and nodes). Pods are cached once, typed, for
// every reader. Every object is stripped by a transform to the fields its readers use.
type clusterInformers struct {
	kube     kubeinformers.SharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
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
	return &clusterInformers{
		kube:     kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTransform(stripTyped)),
		metadata: metadatainformer.NewSharedInformerFactoryWithOptions(meta, 0, metadatainformer.WithTransform(stripMetadata)),
	}, nil
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
// APIs read (stripPod), everything else of its managed fields.
func stripTyped(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		return stripPod(p), nil
	}
	if m, err := apimeta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// stripPod keeps what the pod's readers use: name, namespace, labels and owners (selectors,
// object names); deletion timestamp, phase, start time and conditions (the autoscaler's
// readiness rules); the pod-level, container and init-container (sidecar) requests. It drops
// managedFields, annotations, env, volumes, images, probes, container statuses and the rest.
func stripPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              p.Name,
			Namespace:         p.Namespace,
			UID:               p.UID,
			ResourceVersion:   p.ResourceVersion,
			Labels:            p.Labels,
			OwnerReferences:   p.OwnerReferences,
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{
			Containers:     stripContainers(p.Spec.Containers),
			InitContainers: stripContainers(p.Spec.InitContainers),
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase, StartTime: p.Status.StartTime},
	}
	if p.Spec.Resources != nil {
		out.Spec.Resources = &corev1.ResourceRequirements{Requests: p.Spec.Resources.Requests}
	}
	if len(p.Status.Conditions) > 0 {
		out.Status.Conditions = make([]corev1.PodCondition, len(p.Status.Conditions))
		for i, c := range p.Status.Conditions {
			out.Status.Conditions[i] = corev1.PodCondition{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}
		}
	}
	return out
}

// stripContainers keeps each container's name, restart policy (a restartable init container is
// a sidecar) and requests.
func stripContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, RestartPolicy: c.RestartPolicy,
			Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}}
	}
	return out
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
