package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSelectPodsFindsExactlyTheSelectedPodsOfTheNamespace(t *testing.T) {
	pod := func(space, name string, lbls map[string]string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: space, Name: name, Labels: lbls}}
	}
	f := newFixture(t, nil, nil,
		pod(ns, "a", map[string]string{"app": "vg1", "tier": "dns"}),
		pod(ns, "b", map[string]string{"app": "vg1", "tier": "cache"}),
		pod(ns, "c", map[string]string{"app": "vg2", "tier": "dns"}),
		pod("other", "d", map[string]string{"app": "vg1", "tier": "dns"}),
	)
	for _, space := range []string{ns, "other"} {
		pods, _ := f.kube.CoreV1().Pods(space).List(t.Context(), metav1.ListOptions{})
		for i := range pods.Items {
			if err := f.kubeInf.Core().V1().Pods().Informer().GetIndexer().Add(&pods.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name     string
		selector metav1.LabelSelector
		want     []string
	}{
		{"one label selects its pods in this namespace only", metav1.LabelSelector{MatchLabels: map[string]string{"app": "vg1"}}, []string{"a", "b"}},
		{"several labels select the pods carrying all of them", metav1.LabelSelector{MatchLabels: map[string]string{"app": "vg1", "tier": "dns"}}, []string{"a"}},
		{"an expression narrows the indexed label's pods", metav1.LabelSelector{MatchLabels: map[string]string{"tier": "dns"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"vg1"}}}}, []string{"c"}},
		{"only expressions list the namespace", metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"vg1", "vg2"}}}}, []string{"a", "b", "c"}},
		{"a label no pod has selects nothing", metav1.LabelSelector{MatchLabels: map[string]string{"app": "vg9"}}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := metav1.LabelSelectorAsSelector(&tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			pods, err := f.ctrl.selectPods(ns, sel)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, p := range pods {
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("pods = %v, want %v", got, tc.want)
			}
		})
	}
}
