package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
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
	// metrics API serves it, over servedPods pods, and servedMin the
	// lowest pod's; servedOK is false when the API served no value.
	served, servedMin float64
	servedPods        int
	servedOK          bool
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
	Items []metricValue `json:"items"`
}

// metricValue is one pod's value in a metricValueList.
type metricValue struct {
	DescribedObject struct {
		Name string `json:"name"`
	} `json:"describedObject"`
	Value resource.Quantity `json:"value"`
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
	dep, err := d.cluster.Client.AppsV1().Deployments(d.namespace).Get(ctx, workload, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get deployment %s/%s: %w", d.namespace, workload, err)
	}
	if dep.Spec.Replicas != nil {
		s.current = *dep.Spec.Replicas
	}
	s.ready = dep.Status.ReadyReplicas
	// The load reaches the pods the Service sends to (the Ready ones) on
	// the real node, every running pod on the kwok node.
	sharing := int(s.ready)
	if !d.real() {
		pods, err := d.cluster.RunningPods(ctx, d.namespace, workload)
		if err != nil {
			return s, err
		}
		sharing = len(pods)
	}
	s.offeredPerPod = framework.PerPod(offered, sharing)
	d.readServed(ctx, &s)
	pa, err := d.client.AutoscalingV1alpha1().PodAutoscalers(d.namespace).Get(ctx, autoscaler, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("get PodAutoscaler %s/%s: %w", d.namespace, autoscaler, err)
	}
	s.desired = pa.Status.DesiredReplicas
	s.condition = limitingCondition(pa)
	readResources(&s, pa)
	d.readFootprint(ctx)
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
	setServed(s, list)
}

// setServed sets s's served average, lowest value and pods from list;
// an empty list leaves them unset.
func setServed(s *sample, list metricValueList) {
	var sum float64
	for i, it := range list.Items {
		v := it.Value.AsApproximateFloat64()
		sum += v
		if i == 0 || v < s.servedMin {
			s.servedMin = v
		}
	}
	if n := len(list.Items); n > 0 {
		s.served, s.servedPods, s.servedOK = sum/float64(n), n, true
	}
}

// readRescales lists the PodAutoscaler's SuccessfulRescale events, oldest
// first, as "1→3: <reason>": which metric drove each scale-up.
func (d *demo) readRescales(ctx context.Context) ([]string, error) {
	list, err := d.cluster.Client.EventsV1().Events(d.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list events in %s: %w", d.namespace, err)
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	var out []string
	for _, e := range events {
		if e.Regarding.Name == autoscaler && e.Reason == "SuccessfulRescale" {
			out = append(out, clockString(eventTime(e).Sub(d.profileStart))+" "+e.Note)
		}
	}
	return out, nil
}

// eventTime is when e happened (events.k8s.io sets eventTime; older
// writers only the deprecated fields).
func eventTime(e eventsv1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.DeprecatedLastTimestamp.Time
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
