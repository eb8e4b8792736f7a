package migrate

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// finished checks the end state of a hand-over: no HPA, the converted PodAutoscaler active.
func finished(t *testing.T, c *cluster) {
	t.Helper()
	s := c.state(t)
	if s.hpa || s.pa == nil {
		t.Fatalf("after the hand-over: HPA present %v, PodAutoscaler %v; want only the PodAutoscaler", s.hpa, s.pa != nil)
	}
	if diff := cmp.Diff(converted(t, false).Spec, s.pa.Spec); diff != "" {
		t.Errorf("PodAutoscaler spec (-converted, active +got):\n%s", diff)
	}
}

// TestApplyHandsOverAndRerunFinishes: a hand-over interrupted at any step leaves the target with
// exactly one active autoscaler (its HPA), and a rerun finishes it.
func TestApplyHandsOverAndRerunFinishes(t *testing.T) {
	tests := []struct {
		name    string
		fault   func(*cluster, bool)
		wantErr error
		wantOut string
	}{
		{name: "uninterrupted: the HPA goes and the PodAutoscaler turns active", fault: func(*cluster, bool) {}},
		{name: "interrupted at (a): the PodAutoscaler cannot be created, the HPA stays",
			fault: func(c *cluster, on bool) { c.fail["create podautoscalers"] = on }, wantErr: ErrIncomplete, wantOut: "create PodAutoscaler shop/web in dryRun"},
		{name: "interrupted at (b): no decision within --apply-wait, the HPA stays beside the dry-run PodAutoscaler",
			fault: func(c *cluster, on bool) { c.deciding = !on }, wantErr: ErrNoDecision, wantOut: "no dry-run decision in status yet"},
		{name: "interrupted at (c): the HPA cannot be deleted, it stays beside the dry-run PodAutoscaler",
			fault: func(c *cluster, on bool) { c.fail["delete horizontalpodautoscalers"] = on }, wantErr: ErrIncomplete, wantOut: "delete HorizontalPodAutoscaler shop/web"},
		{name: "interrupted at (d): dryRun cannot be turned off, the HPA is created again",
			fault: func(c *cluster, on bool) { c.fail["update podautoscalers"] = on }, wantErr: ErrIncomplete, wantOut: "HorizontalPodAutoscaler shop/web restored"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, hpaWeb())
			tc.fault(c, true)
			out, _, err := c.migrate(t, applyOptions())
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("migrate --apply: %v\n%s", err, out)
				}
				finished(t, c)
				return
			}
			if !errors.Is(err, ErrIncomplete) || !strings.Contains(out, tc.wantOut) {
				t.Fatalf("migrate --apply = %v, output:\n%s\nwant ErrIncomplete and %q", err, out, tc.wantOut)
			}
			if s := c.state(t); !s.hpa || s.activeAutoscalers() != 1 {
				t.Fatalf("after the interruption: HPA present %v, active autoscalers %d; want the HPA alone active", s.hpa, s.activeAutoscalers())
			}
			tc.fault(c, false)
			if out, _, err := c.migrate(t, applyOptions()); err != nil {
				t.Fatalf("rerun: %v\n%s", err, out)
			}
			finished(t, c)
		})
	}
}

// TestApplyFinishesAHandOverInterruptedAfterTheHPAWent: a dry-run PodAutoscaler written by
// migrate whose HPA is gone (the run ended between (c) and (d)) is turned active by a rerun.
func TestApplyFinishesAHandOverInterruptedAfterTheHPAWent(t *testing.T) {
	c := newCluster(t, converted(t, true))
	out, _, err := c.migrate(t, applyOptions())
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	if !strings.Contains(out, "interrupted hand-over finished") {
		t.Errorf("output does not report the finished hand-over:\n%s", out)
	}
	finished(t, c)
}

// TestApplyFinishesInterruptedHandOversFirst: a rerun turns active the dry-run PodAutoscalers
// whose HPA an interruption already deleted before it hands any other target over, since those
// targets have no active autoscaler meanwhile and each other hand-over may wait --apply-wait.
func TestApplyFinishesInterruptedHandOversFirst(t *testing.T) {
	interrupted := converted(t, true)
	interrupted.Namespace = "blog"
	c := newCluster(t, interrupted, hpaWeb())
	out, _, err := c.migrate(t, applyOptions())
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	finished(t, c)
	finishedIn(t, c, "blog")
	done := strings.Index(out, "blog/web: interrupted hand-over finished")
	next := strings.Index(out, "shop/web: PodAutoscaler created in dryRun")
	if done < 0 || next < 0 || done > next {
		t.Errorf("the interrupted hand-over of blog/web was not finished before shop/web's began:\n%s", out)
	}
}

// TestApplyWhenActivationAndRestoreBothFail: when (d) and the HPA's restore both fail, the error
// says the target has no active autoscaler and how to finish; the rerun does.
func TestApplyWhenActivationAndRestoreBothFail(t *testing.T) {
	c := newCluster(t, hpaWeb())
	c.fail["update podautoscalers"], c.fail["create horizontalpodautoscalers"] = true, true
	out, _, err := c.migrate(t, applyOptions())
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(out, "no active autoscaler until a rerun") {
		t.Fatalf("migrate --apply = %v, output:\n%s", err, out)
	}
	c.fail = map[string]bool{}
	if out, _, err := c.migrate(t, applyOptions()); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	finished(t, c)
}

// TestApplyRefusesWhatItMustNotTouch: the target is left as it is, and the reason reported.
func TestApplyRefusesWhatItMustNotTouch(t *testing.T) {
	notOurs := converted(t, true)
	notOurs.Annotations = nil
	mine := converted(t, false)
	mine.Name, mine.Annotations = "mine", nil
	changedHPA := hpaWeb()
	changedHPA.Spec.MaxReplicas = 20
	tests := []struct {
		name    string
		objs    []runtime.Object
		mutate  func(*cluster)
		wantOut string
		wantHPA bool
		wantPA  *podpilotv1alpha1.PodAutoscaler
	}{
		{name: "an active PodAutoscaler beside the HPA is refused and reported", objs: []runtime.Object{hpaWeb(), converted(t, false)},
			wantOut: ErrActiveBesideHPA.Error(), wantHPA: true, wantPA: converted(t, false)},
		{name: "a PodAutoscaler of the HPA's name that migrate did not write is left alone", objs: []runtime.Object{hpaWeb(), notOurs},
			wantOut: ErrNotMigrated.Error(), wantHPA: true, wantPA: notOurs},
		{name: "a target another active PodAutoscaler scales is not joined (both would refuse to scale it)", objs: []runtime.Object{hpaWeb(), mine},
			wantOut: ErrTargetTaken.Error(), wantHPA: true},
		{name: "an HPA whose spec changed after it was read is not deleted", objs: []runtime.Object{hpaWeb()},
			mutate: func(c *cluster) {
				c.kube.PrependReactor("get", "horizontalpodautoscalers", func(k8stesting.Action) (bool, runtime.Object, error) { return true, changedHPA, nil })
			},
			wantOut: ErrHPAChanged.Error(), wantHPA: true, wantPA: converted(t, true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, tc.objs...)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			out, _, err := c.migrate(t, applyOptions())
			if !errors.Is(err, ErrIncomplete) || !strings.Contains(out, tc.wantOut) {
				t.Fatalf("migrate --apply = %v, output:\n%s\nwant ErrIncomplete and %q", err, out, tc.wantOut)
			}
			s := c.state(t)
			if s.hpa != tc.wantHPA {
				t.Errorf("HPA present %v, want %v", s.hpa, tc.wantHPA)
			}
			switch {
			case tc.wantPA == nil && s.pa != nil:
				t.Errorf("PodAutoscaler shop/web written: %+v", s.pa.Spec)
			case tc.wantPA != nil && s.pa == nil:
				t.Error("PodAutoscaler shop/web gone")
			case tc.wantPA != nil:
				if diff := cmp.Diff(tc.wantPA.Spec, s.pa.Spec); diff != "" {
					t.Errorf("PodAutoscaler spec (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestApplyRerunAfterAFinishedHandOverChangesNothing: nothing is left to do, and nothing fails.
func TestApplyRerunAfterAFinishedHandOverChangesNothing(t *testing.T) {
	c := newCluster(t, converted(t, false))
	if out, _, err := c.migrate(t, applyOptions()); err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	finished(t, c)
}

// TestApplyFleet: every convertible HPA of the cluster is handed over; a refused one keeps its
// HPA and no PodAutoscaler is written for it, and the run reports it.
func TestApplyFleet(t *testing.T) {
	other := hpaWeb()
	other.Namespace, other.UID = "blog", "hpa-blog-web"
	refused := hpaWeb()
	refused.Name, refused.UID, refused.Spec.ScaleTargetRef.Kind = "rs", "hpa-rs", "ReplicaSet"
	c := newCluster(t, hpaWeb(), other, refused)
	out, errOut, err := c.migrate(t, applyOptions())
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(errOut, "refused: HorizontalPodAutoscaler shop/rs") {
		t.Fatalf("migrate --apply = %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	finished(t, c)
	finishedIn(t, c, "blog") // shop/web is checked by finished
	if _, err := c.kube.AutoscalingV2().HorizontalPodAutoscalers("shop").Get(t.Context(), "rs", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused HPA shop/rs: %v; want it left as it was", err)
	}
	if _, err := c.pp.AutoscalingV1alpha1().PodAutoscalers("shop").Get(t.Context(), "rs", metav1.GetOptions{}); err == nil {
		t.Error("a PodAutoscaler was written for the refused HPA shop/rs")
	}
}

// finishedIn checks that web in namespace ns has its PodAutoscaler active and no HPA.
func finishedIn(t *testing.T, c *cluster, ns string) {
	t.Helper()
	pa, err := c.pp.AutoscalingV1alpha1().PodAutoscalers(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || pa.Spec.DryRun {
		t.Errorf("PodAutoscaler %s/web = %v, %v; want it active", ns, pa, err)
	}
	if _, err := c.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(t.Context(), "web", metav1.GetOptions{}); err == nil {
		t.Errorf("HPA %s/web still there", ns)
	}
}

// TestApplyRerunWithTheServersDefaultWritesNothing: a dry-run PodAutoscaler whose stored spec
// differs from the conversion only by the minReplicas the API server defaulted is not rewritten.
func TestApplyRerunWithTheServersDefaultWritesNothing(t *testing.T) {
	h := hpaWeb() // minReplicas unset
	stored := converted(t, true)
	one := int32(1)
	stored.Spec.MinReplicas = &one
	c := newCluster(t, h, stored)
	c.deciding = false
	c.fail["update podautoscalers"] = true // any rewrite would fail the run at (a)
	out, _, _ := c.migrate(t, applyOptions())
	if !strings.Contains(out, "PodAutoscaler already in dryRun beside HorizontalPodAutoscaler web") {
		t.Errorf("the stored PodAutoscaler was not taken as it is:\n%s", out)
	}
}
