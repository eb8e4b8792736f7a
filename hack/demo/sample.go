package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// sample is what one tick saw.
type sample struct {
	at    time.Duration
	phase string
	// offered is the total qps offered; offeredPerPod its share per running pod.
	offered, offeredPerPod float64
	// served is the per-pod average of zdns_vanguard_qps as the custom
	// metrics API serves it, over servedPods pods; servedOK is false when
	// the API served no value.
	served     float64
	servedPods int
	servedOK   bool
	// cpuUtil is the pods' average cpu Utilization (percent of their
	// requests) and memory their average memory in bytes, as the
	// PodAutoscaler last read them (status.currentMetrics); cpuOK and
	// memoryOK are false when it has no such value.
	cpuUtil  int32
	cpuOK    bool
	memory   float64
	memoryOK bool
	// desired is the PodAutoscaler's status.desiredReplicas; current and
	// ready are the Deployment's spec.replicas and status.readyReplicas.
	desired, current, ready int32
	// condition is the PodAutoscaler's limiting condition, e.g. TooManyReplicas.
	condition string
}

// metricValueList is the part of a custom.metrics.k8s.io list the demo reads.
type metricValueList struct {
	Items []struct {
		DescribedObject struct {
			Name string `json:"name"`
		} `json:"describedObject"`
		Value resource.Quantity `json:"value"`
	} `json:"items"`
}

// servedPath is the custom metrics API path of zdns_vanguard_qps for every pod of ns.
func servedPath(ns string) string {
	return "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/" + metricName
}

// servedSelector restricts servedPath to the workload's pods, as the
// autoscaler reads it: without it, pods deleted by a scale-down are listed
// while their series are still inside the 1m rate window.
const servedSelector = "?labelSelector=app%3D" + workload

// takeSample reads the served metric, the PodAutoscaler and the Deployment.
func (d *demo) takeSample(ctx context.Context, at time.Duration, phase string, offered float64) (sample, error) {
	s := sample{at: at, phase: phase, offered: offered}
	pods, err := d.cluster.RunningPods(ctx, d.namespace, workload)
	if err != nil {
		return s, err
	}
	s.offeredPerPod = framework.PerPod(offered, len(pods))
	d.readServed(ctx, &s)
	dep, err := d.cluster.Client.AppsV1().Deployments(d.namespace).Get(ctx, workload, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get deployment %s/%s: %w", d.namespace, workload, err)
	}
	if dep.Spec.Replicas != nil {
		s.current = *dep.Spec.Replicas
	}
	s.ready = dep.Status.ReadyReplicas
	pa, err := d.client.AutoscalingV1alpha1().PodAutoscalers(d.namespace).Get(ctx, autoscaler, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get PodAutoscaler %s/%s: %w", d.namespace, autoscaler, err)
	}
	s.desired = pa.Status.DesiredReplicas
	s.condition = limitingCondition(pa)
	readResources(&s, pa)
	return s, nil
}

// readResources sets s's cpu Utilization and memory from the values the
// PodAutoscaler last read for its cpu and memory targets.
func readResources(s *sample, pa *podpilotv1alpha1.PodAutoscaler) {
	for _, m := range pa.Status.CurrentMetrics {
		if m.Type != podpilotv1alpha1.ResourceMetricSourceType {
			continue
		}
		switch {
		case m.Name == "cpu" && m.AverageUtilization != nil:
			s.cpuUtil, s.cpuOK = *m.AverageUtilization, true
		case m.Name == "memory" && m.AverageValue != nil:
			s.memory, s.memoryOK = m.AverageValue.AsApproximateFloat64(), true
		}
	}
}

// readServed sets s.served to the per-pod average of the custom metric as
// read through the kube-apiserver. An error (e.g. 404 before the first
// series is discovered) leaves it unset: the row shows "-".
func (d *demo) readServed(ctx context.Context, s *sample) {
	body, err := d.cluster.RawGet(ctx, servedPath(d.namespace)+servedSelector)
	if err != nil {
		return
	}
	var list metricValueList
	if json.Unmarshal(body, &list) != nil {
		return
	}
	var sum float64
	for _, it := range list.Items {
		sum += it.Value.AsApproximateFloat64()
	}
	if n := len(list.Items); n > 0 {
		s.served, s.servedPods, s.servedOK = sum/float64(n), n, true
	}
}

// limitingCondition names what bounds the PodAutoscaler now: a failing
// ScalingActive, else a ScalingLimited reason (TooManyReplicas,
// ScaleUpLimit, ...), else AbleToScale's reason (ReadyForNewScale,
// ScaleDownStabilized, ...).
func limitingCondition(pa *podpilotv1alpha1.PodAutoscaler) string {
	conds := pa.Status.Conditions
	if c := meta.FindStatusCondition(conds, podpilotv1alpha1.ConditionScalingActive); c != nil && c.Status != metav1.ConditionTrue {
		return "ScalingActive=False: " + c.Reason
	}
	if c := meta.FindStatusCondition(conds, podpilotv1alpha1.ConditionScalingLimited); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	if c := meta.FindStatusCondition(conds, podpilotv1alpha1.ConditionAbleToScale); c != nil {
		return c.Reason
	}
	return "-"
}
