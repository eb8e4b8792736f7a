package controller

import (
	"errors"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// podsOf converts the target's pods to the calculator's view. Pods of one shape share their
// resources (podcache keeps one copy per shape), so the requests are converted once per shape, not
// once per pod: the calculator only reads the maps.
func podsOf(pods []*podcache.Pod) []replicas.Pod {
	out := make([]replicas.Pod, 0, len(pods))
	shapes := make(map[*corev1.Pod]shape, 1)
	for _, p := range pods {
		sh, ok := shapes[p.Resources]
		if !ok {
			sh = shapeOf(p.Resources)
			shapes[p.Resources] = sh
		}
		out = append(out, sh.pod(p))
	}
	return out
}

// podOf converts one cached pod (see podsOf).
func podOf(p *podcache.Pod) replicas.Pod {
	return shapeOf(p.Resources).pod(p)
}

// shape is what the calculator reads of a pod's shared resources: its requests in effect, its
// containers' requests, why any could not be read, and whether it is being resized.
type shape struct {
	requests   map[corev1.ResourceName]int64
	containers map[string]map[corev1.ResourceName]int64
	errs       map[corev1.ResourceName]error
	resizing   bool
}

// shapeOf converts a pod's shared resources.
func shapeOf(res *corev1.Pod) shape {
	requests, errs := requestsOf(res)
	// ContainerResource metrics (kinds.go).
	containers, containerErrs := containerRequestsOf(res)
	for r, err := range containerErrs {
		if errs == nil {
			errs = make(map[corev1.ResourceName]error, 1)
		}
		errs[r] = errors.Join(errs[r], err)
	}
	return shape{requests: requests, containers: containers, errs: errs, resizing: resizing(res)}
}

// pod is p in the calculator's view, with the shape's requests.
func (sh shape) pod(p *podcache.Pod) replicas.Pod {
	return replicas.Pod{
		Name:              p.Name,
		Deleted:           p.DeletionTimestamp != nil,
		Phase:             p.Phase,
		Start:             p.StartTime.Time,
		Ready:             p.Ready,
		ReadyTransition:   p.ReadyTransition.Time,
		Requests:          sh.requests,
		ContainerRequests: sh.containers,
		RequestErrs:       sh.errs,
		Resizing:          sh.resizing,
	}
}

// requestsOf returns the pod's cpu and memory requests in effect (ineffect.go) in milli-units:
// the pod-level request when set, otherwise the sum over its containers and its restartable init
// containers (native sidecars, restartPolicy Always), as upstream's calculatePodRequests; absent
// when any of those containers lacks it. A request, or a sum, beyond int64 milli-units is absent
// too, and its error (replicas.ErrValueOutOfRange) is returned by resource, nil when there is none.
func requestsOf(p *corev1.Pod) (map[corev1.ResourceName]int64, map[corev1.ResourceName]error) {
	out := make(map[corev1.ResourceName]int64, 2)
	var errs map[corev1.ResourceName]error
	for _, r := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		var v int64
		var ok bool
		var err error
		if q, set := podRequest(p, r); set {
			v, err = replicas.MilliOf(q)
			ok = true
		} else {
			v, ok, err = containerRequests(p, r)
		}
		switch {
		case err != nil:
			if errs == nil {
				errs = make(map[corev1.ResourceName]error, 1)
			}
			errs[r] = fmt.Errorf("%s request: %w", r, err)
		case ok:
			out[r] = v
		}
	}
	return out, errs
}

// containerRequests sums r's requests in effect over the pod's containers and restartable init
// containers; false when there are no containers or one of them has no request for r. A request
// or a sum beyond int64 milli-units is replicas.ErrValueOutOfRange.
func containerRequests(p *corev1.Pod, r corev1.ResourceName) (int64, bool, error) {
	sum, counted := int64(0), 0
	var err error
	add := func(c corev1.Container) bool {
		q, ok := containerRequest(p, &c, r)
		v, verr := replicas.MilliOf(q)
		switch {
		case err != nil:
		case verr != nil:
			err = fmt.Errorf("container %s: %w", c.Name, verr)
		case v > math.MaxInt64-sum:
			err = fmt.Errorf("sum over the containers beyond %d milli-units: %w", int64(math.MaxInt64), replicas.ErrValueOutOfRange)
		default:
			sum += v
		}
		counted++
		return ok
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways && !add(c) {
			return 0, false, nil
		}
	}
	for _, c := range p.Spec.Containers {
		if !add(c) {
			return 0, false, nil
		}
	}
	if err != nil {
		return 0, false, err
	}
	return sum, counted > 0, nil
}

// podLabelIndex indexes pods by "namespace/key=value" for each of their labels, so that a target's
// pods are found among the pods carrying one of its selector's labels rather than among every pod
// of the namespace: a round then costs in proportion to each target's pods, not to autoscalers ×
// pods per namespace.
const podLabelIndex = "podpilot.io/label"

func podLabelIndexFunc(obj any) ([]string, error) {
	pod, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, nil //nolint:nilerr // not a pod: not indexed
	}
	keys := make([]string, 0, len(pod.GetLabels()))
	for k, v := range pod.GetLabels() {
		keys = append(keys, pod.GetNamespace()+"/"+k+"="+v)
	}
	return keys, nil
}

// addPodLabelIndex adds podLabelIndex to inf unless it has it already.
func addPodLabelIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[podLabelIndex]; ok {
		return nil
	}
	return inf.AddIndexers(cache.Indexers{podLabelIndex: podLabelIndexFunc})
}

// selectPods returns the pods of namespace that selector selects: the smallest index bucket of
// the selector's single-valued equality requirements, filtered by the whole selector; a selector
// without one lists the namespace.
func (c *Controller) selectPods(namespace string, selector labels.Selector) ([]*podcache.Pod, error) {
	reqs, _ := selector.Requirements()
	var bucket string
	size := -1
	for _, r := range reqs {
		op, values := r.Operator(), r.Values()
		if (op != selection.Equals && op != selection.DoubleEquals && op != selection.In) || values.Len() != 1 {
			continue
		}
		value := namespace + "/" + r.Key() + "=" + values.UnsortedList()[0]
		keys, err := c.podIndexer.IndexKeys(podLabelIndex, value)
		if err != nil {
			return nil, fmt.Errorf("look up pods by label %s: %w", value, err)
		}
		if size < 0 || len(keys) < size {
			bucket, size = value, len(keys)
		}
	}
	if size < 0 {
		return c.podLister.List(namespace, selector)
	}
	return c.podLister.ByIndex(podLabelIndex, bucket, selector)
}
