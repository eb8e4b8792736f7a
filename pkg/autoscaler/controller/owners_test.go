package controller

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/podcache"
)

func TestSplitByOwnerCountsOnlyPodsWhoseControllerIsTheTargets(t *testing.T) {
	pod := func(name string, refs ...metav1.OwnerReference) *podcache.Pod {
		return &podcache.Pod{Name: name, OwnerReferences: refs}
	}
	owners := []types.UID{"rs-new", "rs-old"}
	tests := []struct {
		name        string
		pod         *podcache.Pod
		wantForeign bool
	}{
		{"a pod controlled by one of the target's ReplicaSets is its own", pod("a", controllerRef("ReplicaSet", "web-new", "rs-new")), false},
		{"a pod of the target's older ReplicaSet (a rollout) is its own", pod("b", controllerRef("ReplicaSet", "web-old", "rs-old")), false},
		{"a pod of another workload matching the selector is foreign (kubernetes#124307)", pod("c", controllerRef("ReplicaSet", "api-1", "rs-api")), true},
		{"an orphan pod matching the selector is foreign", pod("d"), true},
		{"a pod the target's ReplicaSet owns without being its controller is foreign",
			pod("e", metav1.OwnerReference{Kind: "ReplicaSet", Name: "web-new", UID: "rs-new"}), true},
		{"the controller decides among several owners",
			pod("f", metav1.OwnerReference{Kind: "ConfigMap", Name: "x", UID: "cm"}, controllerRef("ReplicaSet", "web-new", "rs-new")), false},
		{"a same-named ReplicaSet with another UID (recreated) is not the target's",
			pod("g", controllerRef("ReplicaSet", "web-new", "rs-recreated")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitByOwner([]*podcache.Pod{tt.pod}, owners)
			if foreign := len(got.foreign) == 1; foreign != tt.wantForeign || len(got.own)+len(got.foreign) != 1 {
				t.Errorf("own %d, foreign %d; want foreign=%v", len(got.own), len(got.foreign), tt.wantForeign)
			}
		})
	}
}

// otherDeploymentPods are n pods of Deployment vg1-api whose labels match the seed's selector,
// with the api's Deployment and ReplicaSet.
func otherDeploymentPods(n int) []runtime.Object {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "vg1-api-7f6c", Namespace: ns, UID: "uid-rs-api",
		OwnerReferences: []metav1.OwnerReference{controllerRef("Deployment", "vg1-api", "uid-deployment-api")}}}
	return append(ownedPods(podNamesWith("vg1-api", n), controllerRef("ReplicaSet", rs.Name, rs.UID)), rs)
}

func TestAverageCoversOnlyTheTargetsOwnPods(t *testing.T) {
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantOverlap string
		wantMessage string
		want        outcome
	}{
		{
			name: "another Deployment's pods matching the selector are left out of the average (kubernetes#124307)",
			objs: append(append(seedPods(2), otherDeploymentPods(3)...), seedDeployment(2)),
			// Own pods: 3000 each, 1.5 × 2 → 3. Upstream would average in the api's 3 pods at
			// 100: 1260 over 5 pods, 0.63 × 5 → 4.
			wantOverlap: "True ForeignPodsIgnored",
			wantMessage: "3 pods match the selector of Deployment/vg1-vanguard without being its own (e.g. owned by Deployment/vg1-api)",
			want: outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Warning ForeignPodsIgnored", "Normal SuccessfulRescale"}},
		},
		{
			name:        "without foreign pods the condition is False and no event goes out",
			objs:        append(seedPods(2), seedDeployment(2)),
			wantOverlap: "False OwnPodsOnly",
			wantMessage: "every pod matching the scale target's selector is its own",
			want: outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Normal SuccessfulRescale"}},
		},
		{
			name:        "a StatefulSet's own pods are those it controls directly; a Deployment's pods are foreign to it",
			objs:        append(append(statefulSetPods(podNames(2)...), otherDeploymentPods(1)...), seedStatefulSet(2)),
			wantOverlap: "True ForeignPodsIgnored",
			wantMessage: "1 pod matches the selector of StatefulSet/vg1-vanguard without being its own (e.g. owned by Deployment/vg1-api)",
			want: outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
				Events:     []string{"Warning ForeignPodsIgnored", "Normal SuccessfulRescale"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := ""
			pa := seedAutoscaler()
			if _, ok := tt.objs[len(tt.objs)-1].(*appsv1.StatefulSet); ok {
				kind, pa.Spec.ScaleTargetKind = "statefulset", podpilotv1alpha1.ScaleTargetStatefulSet
			}
			custom := mergeCustom(qpsPerPod("3000", podNames(2)...), qpsPerPod("100", podNamesWith("vg1-api", 3)...))
			f := newFixture(t, custom, nil, append(tt.objs, pa)...)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			got, lines := outcomeOf(f, kind)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\nevents: %q", diff, lines)
			}
			stored := f.autoscaler()
			if c := condition(stored, podpilotv1alpha1.ConditionSelectorOverlap); c != tt.wantOverlap {
				t.Errorf("SelectorOverlap = %s, want %s", c, tt.wantOverlap)
			}
			if c := meta.FindStatusCondition(stored.Status.Conditions, podpilotv1alpha1.ConditionSelectorOverlap); c == nil || !strings.HasPrefix(c.Message, tt.wantMessage) {
				t.Errorf("SelectorOverlap message = %+v, want it to start with %q", c, tt.wantMessage)
			}

			// The next round sees the same overlap: no second event.
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if reasons, _ := f.events(); len(reasons) != 0 {
				t.Errorf("second round events = %q, want none for an unchanged overlap", reasons)
			}
		})
	}
}

// mergeCustom serves the union of what a and b serve.
func mergeCustom(a, b customFunc) customFunc {
	return func(ctx context.Context, namespace string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		la, err := a(ctx, namespace, sel, info, msel)
		if err != nil {
			return nil, err
		}
		lb, err := b(ctx, namespace, sel, info, msel)
		if err != nil {
			return nil, err
		}
		la.Items = append(la.Items, lb.Items...)
		return la, nil
	}
}
