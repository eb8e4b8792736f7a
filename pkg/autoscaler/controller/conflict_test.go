package controller

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// stockHPA is an autoscaling/v2 HPA named name in the seed's namespace on apiVersion/kind/target.
func stockHPA(name, apiVersion, kind, target string) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target},
			MaxReplicas:    5,
		},
	}
}

func TestScaleTargetIndexKeysAHPAAndAPodAutoscalerOfOneWorkloadAlike(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{"a stock HPA on an apps/v1 Deployment", stockHPA("h", "apps/v1", "Deployment", "web"), []string{scaleTargetKey(ns, deployment, "web")}},
		{"a PodAutoscaler on the same Deployment, kind in any case", seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.ScaleTargetKind, pa.Spec.ScaleTargetName = "Deployment", "web"
		}), []string{scaleTargetKey(ns, deployment, "web")}},
		{"a stock HPA on a StatefulSet", stockHPA("h", "apps/v1", "StatefulSet", "db"),
			[]string{scaleTargetKey(ns, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "db")}},
		{"a stock HPA on another group's kind of the same name is another target", stockHPA("h", "example.com/v1", "Deployment", "web"),
			[]string{scaleTargetKey(ns, schema.GroupKind{Group: "example.com", Kind: "Deployment"}, "web")}},
		{"an HPA whose apiVersion does not parse indexes nothing", stockHPA("h", "a/b/c", "Deployment", "web"), nil},
		{"a PodAutoscaler of an unsupported kind indexes nothing", seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Spec.ScaleTargetKind = "ReplicaSet"
		}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := hpaScaleTargetIndexFunc
			if _, ok := tt.obj.(*podpilotv1alpha1.PodAutoscaler); ok {
				f = paScaleTargetIndexFunc
			}
			got, err := f(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRivalsAreEveryOtherAutoscalerOfTheTargetButExemptOnes(t *testing.T) {
	pa := func(name string) *podpilotv1alpha1.PodAutoscaler {
		return seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Name = name })
	}
	exemptDry := func(p *podpilotv1alpha1.PodAutoscaler) bool { return p.Name == "dry" }
	tests := []struct {
		name string
		self *podpilotv1alpha1.PodAutoscaler
		hpas []*autoscalingv2.HorizontalPodAutoscaler
		pas  []*podpilotv1alpha1.PodAutoscaler
		want []string
	}{
		{name: "a PodAutoscaler alone on its target has no rival", self: pa("web"), pas: []*podpilotv1alpha1.PodAutoscaler{pa("web")}},
		{name: "a stock HPA on the same target is a rival", self: pa("web"),
			hpas: []*autoscalingv2.HorizontalPodAutoscaler{stockHPA("web", "apps/v1", "Deployment", "vg1-vanguard")},
			pas:  []*podpilotv1alpha1.PodAutoscaler{pa("web")}, want: []string{"HorizontalPodAutoscaler/web"}},
		{name: "another PodAutoscaler on the same target is a rival, and it sees this one as its rival", self: pa("b"),
			pas: []*podpilotv1alpha1.PodAutoscaler{pa("a"), pa("b")}, want: []string{"PodAutoscaler/a"}},
		{name: "every rival is named, sorted", self: pa("web"),
			hpas: []*autoscalingv2.HorizontalPodAutoscaler{stockHPA("z", "apps/v1", "Deployment", "vg1-vanguard"), stockHPA("h", "apps/v1", "Deployment", "vg1-vanguard")},
			pas:  []*podpilotv1alpha1.PodAutoscaler{pa("web"), pa("other")},
			want: []string{"HorizontalPodAutoscaler/h", "HorizontalPodAutoscaler/z", "PodAutoscaler/other"}},
		{name: "an exempt (dry-run) PodAutoscaler is nobody's rival", self: pa("web"),
			pas: []*podpilotv1alpha1.PodAutoscaler{pa("web"), pa("dry")}},
		{name: "an exempt (dry-run) PodAutoscaler has no rival, not even a stock HPA", self: pa("dry"),
			hpas: []*autoscalingv2.HorizontalPodAutoscaler{stockHPA("web", "apps/v1", "Deployment", "vg1-vanguard")},
			pas:  []*podpilotv1alpha1.PodAutoscaler{pa("web"), pa("dry")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range rivals(tt.self, tt.hpas, tt.pas, exemptDry) {
				got = append(got, r.name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rivals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAmbiguousScaleTargetIsLeftAlone(t *testing.T) {
	second := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Name = "hpa-vg1-vanguard-2" })
	refused := outcome{Replicas: 2, Current: 2, Desired: 0, Targets: "<unknown>/2k",
		Conditions: map[string]string{"AbleToScale": "True SucceededGetScale", "ScalingActive": "False AmbiguousScaleTarget", "ScalingLimited": "<none>"},
		Events:     []string{"Warning AmbiguousScaleTarget"}}
	tests := []struct {
		name    string
		objs    []runtime.Object
		wantMsg string
	}{
		{"a stock HPA on the same Deployment: the PodAutoscaler refuses and names it",
			[]runtime.Object{stockHPA("vg1-vanguard", "apps/v1", "Deployment", "vg1-vanguard")},
			"Deployment/vg1-vanguard is also the scale target of HorizontalPodAutoscaler/vg1-vanguard; podpilot does not scale it while more than one autoscaler does"},
		{"two PodAutoscalers on one Deployment: each refuses, naming the other", []runtime.Object{second},
			"Deployment/vg1-vanguard is also the scale target of PodAutoscaler/hpa-vg1-vanguard-2; podpilot does not scale it while more than one autoscaler does"},
		{"a stock HPA on another Deployment is no conflict", []runtime.Object{stockHPA("other", "apps/v1", "Deployment", "other")}, ""},
		{"a stock HPA on a StatefulSet of the same name is no conflict", []runtime.Object{stockHPA("sts", "apps/v1", "StatefulSet", "vg1-vanguard")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(append(seedPods(2), seedDeployment(2), seedAutoscaler()), tt.objs...)
			f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, objs...)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			got, lines := outcomeOf(f, "")
			if tt.wantMsg == "" {
				if got.Replicas != 3 {
					t.Errorf("replicas = %d, want 3: no conflict, so the PodAutoscaler scales (events %q)", got.Replicas, lines)
				}
				return
			}
			if diff := cmp.Diff(refused, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\nevents: %q", diff, lines)
			}
			if c := meta.FindStatusCondition(f.autoscaler().Status.Conditions, podpilotv1alpha1.ConditionScalingActive); c == nil || c.Message != tt.wantMsg {
				t.Errorf("ScalingActive = %+v, want message %q", c, tt.wantMsg)
			}
			if n := f.scaleCalls()["update"]; n != 0 {
				t.Errorf("%d scale updates, want none while the target is ambiguous", n)
			}
			if _, ok := tt.objs[0].(*podpilotv1alpha1.PodAutoscaler); ok {
				if err := f.ctrl.sync(t.Context(), cache.ObjectName{Namespace: ns, Name: second.Name}); err != nil {
					t.Fatal(err)
				}
				if reasons, _ := f.events(); !cmp.Equal(reasons, []string{"Warning AmbiguousScaleTarget"}) {
					t.Errorf("the second PodAutoscaler's events = %q, want it to refuse too", reasons)
				}
			}
			// The next round finds the same conflict: the condition stays, no second event.
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if reasons, _ := f.events(); len(reasons) != 0 {
				t.Errorf("second round events = %q, want none for an unchanged conflict", reasons)
			}
		})
	}
}

func TestAmbiguityResolvesOnceTheOtherAutoscalerIsGone(t *testing.T) {
	hpa := stockHPA("vg1-vanguard", "apps/v1", "Deployment", "vg1-vanguard")
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(), hpa)...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(t.Context(), hpa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.events()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	got, lines := outcomeOf(f, "")
	want := outcome{Replicas: 3, Current: 2, Desired: 3, Targets: "3k/2k",
		Conditions: map[string]string{"AbleToScale": "True SucceededRescale", "ScalingActive": "True ValidMetricFound", "ScalingLimited": "False DesiredWithinRange"},
		Events:     []string{"Normal SuccessfulRescale"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s\nevents: %q", diff, lines)
	}
}

func TestScalingByHandIsNoConflictTheNextRoundStartsFromTheNewCount(t *testing.T) {
	// 4 own pods at 1500 against 2000: 0.75 × 4 → 3. Scaled by hand to 6 (the new pods not yet
	// started), the next round reads 6 replicas and decides from them, with no conflict.
	f := newFixture(t, qpsPerPod("1500", podNames(4)...), nil, append(seedPods(4), seedDeployment(4), seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.MaxReplicas = 10
		pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{ScaleDown: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}}
	}))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.replicas(""); got != 3 {
		t.Fatalf("replicas = %d, want 3", got)
	}
	d, err := f.kube.AppsV1().Deployments(ns).Get(t.Context(), "vg1-vanguard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](6)
	bumpResourceVersion(d)
	if _, err := f.kube.AppsV1().Deployments(ns).Update(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.events()
	f.clock.Step(15 * time.Second)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	pa := f.autoscaler()
	if pa.Status.CurrentReplicas != 6 {
		t.Errorf("status.currentReplicas = %d, want 6 read from the hand-scaled Deployment", pa.Status.CurrentReplicas)
	}
	if c := condition(pa, podpilotv1alpha1.ConditionScalingActive); c != "True ValidMetricFound" {
		t.Errorf("ScalingActive = %s, want True ValidMetricFound: scaling by hand is no conflict", c)
	}
	if got := f.replicas(""); got != 3 {
		t.Errorf("replicas = %d, want 3 recomputed from 6 (4 pods at 1500 against 2000)", got)
	}
}

func TestADryRunPodAutoscalerNeitherBlocksNorIsBlocked(t *testing.T) {
	dry := func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.DryRun = true }
	tests := []struct {
		name       string
		self       func(*podpilotv1alpha1.PodAutoscaler)
		other      runtime.Object
		wantActive string
		wantScale  int32
	}{
		{"a dry-run PodAutoscaler beside a stock HPA reports, unblocked, and writes no scale", dry,
			stockHPA("vg1-vanguard", "apps/v1", "Deployment", "vg1-vanguard"), "True ValidMetricFound", 2},
		{"a PodAutoscaler beside a dry-run one on its target scales, unblocked", func(*podpilotv1alpha1.PodAutoscaler) {},
			seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Name = "dry"; dry(pa) }), "True ValidMetricFound", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(append(seedPods(2), seedDeployment(2), seedAutoscaler(tt.self)), tt.other)
			f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, objs...)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			pa := f.autoscaler()
			if c := condition(pa, podpilotv1alpha1.ConditionScalingActive); c != tt.wantActive {
				t.Errorf("ScalingActive = %s, want %s", c, tt.wantActive)
			}
			if pa.Status.DesiredReplicas != 3 {
				t.Errorf("status.desiredReplicas = %d, want 3 (3000 per pod against 2000)", pa.Status.DesiredReplicas)
			}
			if got := f.replicas(""); got != tt.wantScale {
				t.Errorf("replicas = %d, want %d", got, tt.wantScale)
			}
		})
	}
}

func TestDeletingAnHPAQueuesThePodAutoscalersOfItsTargetAtOnce(t *testing.T) {
	pa := seedAutoscaler()
	other := seedAutoscaler(func(p *podpilotv1alpha1.PodAutoscaler) { p.Name, p.Spec.ScaleTargetName = "other", "other-target" })
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{scaleTargetIndex: paScaleTargetIndexFunc})
	for _, p := range []*podpilotv1alpha1.PodAutoscaler{pa, other} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	hpa := stockHPA("h", "apps/v1", "Deployment", pa.Spec.ScaleTargetName)
	for name, obj := range map[string]any{"the HPA": hpa, "a tombstone of it": cache.DeletedFinalStateUnknown{Key: ns + "/h", Obj: hpa}} {
		t.Run(name, func(t *testing.T) {
			tm := newTerm(clocktesting.NewFakeClock(time.Now()), *NewOptions())
			defer tm.shutDown()
			hpaHandler(tm, indexer, func(cache.ObjectName) bool { return true }).OnDelete(obj)
			if tm.queue.Len() != 1 {
				t.Fatalf("queued %d PodAutoscalers, want 1 (the one on the HPA's target)", tm.queue.Len())
			}
			if got, _ := tm.queue.Get(); got != cache.NewObjectName(ns, pa.Name) {
				t.Errorf("queued %v, want %s/%s", got, ns, pa.Name)
			}
		})
	}
}
