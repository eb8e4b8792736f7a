package migrate

import (
	"bytes"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
	podpilotfake "github.com/podpilot/podpilot/pkg/generated/clientset/versioned/fake"
)

// cluster is a fake cluster: HPAs, PodAutoscalers, a stand-in for podpilot's controller that
// writes a dry-run decision into the status of every PodAutoscaler written (while deciding is
// true), and faults the test turns on and off.
type cluster struct {
	kube     *kubefake.Clientset
	pp       *podpilotfake.Clientset
	deciding bool
	// fail names the verb and resource that fail while set, e.g. "delete horizontalpodautoscalers".
	fail map[string]bool
}

func newCluster(t *testing.T, objs ...runtime.Object) *cluster {
	t.Helper()
	var kubeObjs, ppObjs []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*podpilotv1alpha1.PodAutoscaler); ok {
			ppObjs = append(ppObjs, o)
		} else {
			kubeObjs = append(kubeObjs, o)
		}
	}
	c := &cluster{kube: kubefake.NewClientset(kubeObjs...), pp: podpilotfake.NewSimpleClientset(ppObjs...), deciding: true, fail: map[string]bool{}}
	faults := func(action k8stesting.Action) (bool, runtime.Object, error) {
		if c.fail[action.GetVerb()+" "+action.GetResource().Resource] {
			return true, nil, apierrors.NewServiceUnavailable("injected fault")
		}
		return false, nil, nil
	}
	c.kube.PrependReactor("*", "*", faults)
	c.pp.PrependReactor("*", "podautoscalers", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if handled, obj, err := faults(action); handled {
			return handled, obj, err
		}
		if g, ok := action.(k8stesting.GetAction); ok && c.deciding {
			c.decideStored(t, g)
		}
		if w, ok := action.(interface{ GetObject() runtime.Object }); ok && c.deciding {
			if pa, ok := w.GetObject().(*podpilotv1alpha1.PodAutoscaler); ok {
				decide(pa)
			}
		}
		return false, nil, nil
	})
	return c
}

// decideStored has the stored PodAutoscaler decide, as the controller's next round would.
func (c *cluster) decideStored(t *testing.T, g k8stesting.GetAction) {
	obj, err := c.pp.Tracker().Get(g.GetResource(), g.GetNamespace(), g.GetName())
	if err != nil {
		return // NotFound: the get answers it
	}
	pa := obj.(*podpilotv1alpha1.PodAutoscaler).DeepCopy()
	decide(pa)
	if err := c.pp.Tracker().Update(g.GetResource(), pa, g.GetNamespace()); err != nil {
		t.Errorf("decide %s/%s: %v", g.GetNamespace(), g.GetName(), err)
	}
}

// decide writes what podpilot's controller writes after a round: a decision for the spec's
// generation, metrics read.
func decide(pa *podpilotv1alpha1.PodAutoscaler) {
	mode := podpilotv1alpha1.ActiveMode
	if pa.Spec.DryRun {
		mode = podpilotv1alpha1.DryRunMode
	}
	pa.Status = podpilotv1alpha1.PodAutoscalerStatus{
		ObservedGeneration: pa.Generation, Mode: mode, Targets: "30%/50%",
		LastDecision: &podpilotv1alpha1.LastDecision{FromReplicas: 3, ToReplicas: 2, Winner: "Metric resource cpu"},
		Conditions:   []metav1.Condition{{Type: podpilotv1alpha1.ConditionScalingActive, Status: metav1.ConditionTrue, Reason: "ValidMetricFound"}},
	}
}

// hpaWeb is the HPA of the Deployment web in shop.
func hpaWeb() *autoscalingv2.HorizontalPodAutoscaler {
	u := int32(50)
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "hpa-web-1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u},
			}}},
		},
	}
}

// converted is hpaWeb's PodAutoscaler with dryRun as given.
func converted(t *testing.T, dryRun bool) *podpilotv1alpha1.PodAutoscaler {
	t.Helper()
	f := hpaconv.UpstreamDefaults()
	pa, err := hpaconv.Convert(hpaWeb(), &f)
	if err != nil {
		t.Fatal(err)
	}
	pa.Spec.DryRun = dryRun
	return pa
}

// state is what autoscales the target web: whether its HPA exists, and its PodAutoscaler.
type state struct {
	hpa bool
	pa  *podpilotv1alpha1.PodAutoscaler
}

func (c *cluster) state(t *testing.T) state {
	t.Helper()
	var s state
	_, err := c.kube.AutoscalingV2().HorizontalPodAutoscalers("shop").Get(t.Context(), "web", metav1.GetOptions{})
	s.hpa = err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	pa, err := c.pp.AutoscalingV1alpha1().PodAutoscalers("shop").Get(t.Context(), "web", metav1.GetOptions{})
	if err == nil {
		s.pa = pa
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return s
}

// activeAutoscalers counts what writes the target's scale: the HPA, and an active PodAutoscaler.
func (s state) activeAutoscalers() int {
	n := 0
	if s.hpa {
		n++
	}
	if s.pa != nil && !s.pa.Spec.DryRun {
		n++
	}
	return n
}

// applyOptions are --from-cluster --apply options with a wait that never sleeps long.
func applyOptions() *Options {
	o := NewOptions()
	o.FromCluster, o.Apply = true, true
	o.ApplyWait, o.PollInterval = 50*time.Millisecond, time.Millisecond
	return o
}

// migrate runs `podpilot migrate` against c and returns its stdout, stderr and error.
func (c *cluster) migrate(t *testing.T, o *Options) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(t.Context(), o, &Clients{Kube: c.kube, Podpilot: c.pp}, &bytes.Buffer{}, &out, &errOut)
	return out.String(), errOut.String(), err
}
