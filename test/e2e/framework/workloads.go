package framework

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// PodTemplate is a pod template for a workload labelled app=name, placed on
// the kwok node. Its image is never pulled: kwok runs no containers. On a
// real node the scheduler places it and it runs the local pause image: real
// containers that hold their requests and do nothing.
func (c *Cluster) PodTemplate(name string) corev1.PodTemplateSpec {
	if c.Node.Name != "" {
		return realPodTemplate(name)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName: c.KwokNode,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.invalid/podpilot/fake:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
		},
	}
}

// realPodTemplate is PodTemplate for a real node: small requests, so that
// tens of replicas fit on a 2-core machine.
func realPodTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name:            "app",
				Image:           PauseImage,
				ImagePullPolicy: corev1.PullNever,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("10m"),
					corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
			}},
		},
	}
}

// PauseImage is the real node's sandbox image (hack/build-image.sh pause),
// imported by hack/local-up.sh.
const PauseImage = "localhost/podpilot/pause:local"

// Deployment returns a Deployment of name with replicas pods on the kwok node.
func (c *Cluster) Deployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: c.PodTemplate(name),
		},
	}
}

// RunningPods lists the Running and Ready pods matching app=name in ns,
// leaving out pods being deleted.
func (c *Cluster) RunningPods(ctx context.Context, ns, name string) ([]corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{"app": name}).String()
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list pods of %s/%s: %w", ns, name, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// StatefulSet returns a StatefulSet of name with replicas pods on the kwok
// node, started in parallel.
func (c *Cluster) StatefulSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template:            c.PodTemplate(name),
		},
	}
}

// Replicas returns spec.replicas of the Deployment or StatefulSet name in ns.
func (c *Cluster) Replicas(ctx context.Context, kind, ns, name string) (int32, error) {
	switch kind {
	case "Deployment":
		s, err := c.Client.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("get scale of deployment %s/%s: %w", ns, name, err)
		}
		return s.Spec.Replicas, nil
	case "StatefulSet":
		s, err := c.Client.AppsV1().StatefulSets(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("get scale of statefulset %s/%s: %w", ns, name, err)
		}
		return s.Spec.Replicas, nil
	}
	return 0, fmt.Errorf("unknown workload kind %q", kind)
}

// WaitReplicas waits until the workload's spec.replicas is want.
func (c *Cluster) WaitReplicas(ctx context.Context, t testing.TB, timeout time.Duration, kind, ns, name string, want int32) {
	t.Helper()
	WaitFor(ctx, t, timeout, fmt.Sprintf("%s %s scaled to %d", kind, name, want), func(ctx context.Context) (bool, string, error) {
		got, err := c.Replicas(ctx, kind, ns, name)
		return got == want, fmt.Sprintf("%d replicas", got), err
	})
}

// HoldReplicas fails the test if the workload's spec.replicas is ever other
// than want during d.
func (c *Cluster) HoldReplicas(ctx context.Context, t testing.TB, d time.Duration, kind, ns, name string, want int32) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		got, err := c.Replicas(ctx, kind, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s %s has %d replicas, want it held at %d", kind, name, got, want)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Logf("%s %s held at %d replicas for %s", kind, name, want, d)
}
