package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The assertions of the fleet test on its record, per target, the hand-over being the HPA's
// deletion (del) and the PodAutoscaler's dryRun turned off (act):
//
//	(a) no jump: every change of spec.replicas before del was written by kube-controller-manager
//	    and is the HPA's next recorded desiredReplicas; none happens between del and act; every
//	    one after act was written by podpilot and is the PodAutoscaler's next recorded
//	    desiredReplicas, in mode Active. No scale-up is larger than the behavior's Pods policy
//	    allows in one period.
//	(b) act comes after del (never two active autoscalers), and act − del is at most one sync
//	    period, but for a hand-over in flight at the kill (del before it, act after: its gap may
//	    include the time to the rerun, reported apart).
//	(c) the PodAutoscaler's last dry-run decision before act equals the HPA's last decision
//	    (the state the deletion removed) when both decided on the same inputs (current replicas,
//	    and metric values within 2%, the jitter of a rate between two reads); its first decision
//	    after act equals the HPA's last one, or its own last dry-run one, on the same inputs. Where a
//	    stabilization window or a scaling limit held either decision, the two rounds ran at
//	    different times of the same window or policy period, so they may differ by timing only:
//	    then both must lie between the current replicas and the PodAutoscaler's unlimited
//	    recommendation, or the largest it made within its downscale window (a window holds the
//	    largest recommendation it saw, and a load that moved for less than a sync period may
//	    have been read by one autoscaler's round and not the other's; see compareDecisions),
//	    and the pair is counted apart.

// fleetFigures are what checkFleetRecord measured.
type fleetFigures struct {
	handedOver, interrupted               int
	maxGap, maxInterruptedGap, maxToRound time.Duration
	maxGapTarget                          string
	byHPA, byPodAutoscaler, unconfirmed   int
	maxJump                               int32
	dryCompared, firstCompared, timing    int
	beyond                                int
}

func checkFleetRecord(t *testing.T, targets []*fleetTarget, r fleetRecord, syncPeriod, downscaleWindow time.Duration) {
	t.Helper()
	var f fleetFigures
	kinds := map[string]int{}
	for _, ft := range targets {
		kinds[ft.kind]++
		checkFleetTarget(t, ft, r, syncPeriod, downscaleWindow, &f)
	}
	framework.Report(t, "MIGRATE", "targets", "%d (Pods %d, Object %d, External %d, Resource %d, ContainerResource %d); handed over %d; "+
		"the first namespace's --apply killed after its %dth HPA deletion (%d hand-overs reported done), its rerun handed over %d more "+
		"and finished %d left between an HPA's deletion and dryRun off", len(targets), kinds["Pods"], kinds["Object"],
		kinds["External"], kinds["Resource"], kinds["ContainerResource"], f.handedOver, fleetInterruptAfter, r.killedActivated,
		r.rerunActivated, r.rerunFinished)
	framework.Report(t, "MIGRATE", "without an autoscaler", "max %s (%s), HPA deletion to dryRun off; sync period %s; "+
		"%d hand-overs in flight at the kill (deletion before it, dryRun off after), max %s; HPA deletion to the PodAutoscaler's "+
		"first active round max %s", f.maxGap.Round(time.Millisecond), f.maxGapTarget, syncPeriod, f.interrupted,
		f.maxInterruptedGap.Round(time.Millisecond), f.maxToRound.Round(time.Millisecond))
	if r.rerunActivated+r.rerunFinished == 0 {
		t.Errorf("the rerun after the kill handed nothing over")
	}
	framework.Report(t, "MIGRATE", "replica changes", "%d by the HPAs (%d of them unconfirmed: the HPA's status write lost to its deletion), "+
		"%d by the PodAutoscalers; largest first change after a hand-over %d", f.byHPA, f.unconfirmed, f.byPodAutoscaler, f.maxJump)
	framework.Report(t, "MIGRATE", "decisions", "dry run against the HPA's last on the same inputs: %d targets compared; "+
		"first active decision against the HPA's last or the dry run's on the same inputs: %d compared; "+
		"%d of those pairs differ by timing only (a window or scaling limit held one of them at its round), %d beyond that", f.dryCompared, f.firstCompared, f.timing, f.beyond)
	// A check that compared (almost) nothing would say nothing: at least the 20 targets whose load
	// does not move must have been compared.
	if f.dryCompared < 20 || f.firstCompared < 20 {
		t.Errorf("too few decisions compared on the same inputs (dry run %d, first active %d, want ≥ 20 each)", f.dryCompared, f.firstCompared)
	}
}

// targetCheck fails the test for one target and, once, logs that target's whole record.
type targetCheck struct {
	t      *testing.T
	key    string
	r      fleetRecord
	logged bool
}

func (c *targetCheck) Errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf(format, args...)
	if c.logged {
		return
	}
	c.logged = true
	var b strings.Builder
	for _, ch := range c.r.changes[c.key] {
		fmt.Fprintf(&b, "\n  replicas %d→%d rv %d at %s by %q (%s)", ch.old, ch.new, ch.rv, ch.at.Format("15:04:05.000"), ch.owner, ch.ownerTime)
	}
	for _, o := range c.r.hpas[c.key] {
		fmt.Fprintf(&b, "\n  HPA %s", describeObs(o))
	}
	for _, o := range c.r.pas[c.key] {
		fmt.Fprintf(&b, "\n  PodAutoscaler %s", describeObs(o))
	}
	c.t.Logf("record of %s (initial replicas %d):%s", c.key, c.r.initial[c.key], b.String())
}

func checkFleetTarget(tt *testing.T, ft *fleetTarget, r fleetRecord, syncPeriod, downscaleWindow time.Duration, f *fleetFigures) {
	tt.Helper()
	key := ft.key()
	t := &targetCheck{t: tt, key: key, r: r}
	hpas, pas := r.hpas[key], r.pas[key]
	del, ok := firstObs(hpas, func(o decisionObs) bool { return o.deletion })
	if !ok {
		t.Errorf("%s: the HPA was never deleted", key)
		return
	}
	act, ok := firstObs(pas, func(o decisionObs) bool { return !o.dryRun })
	if !ok {
		t.Errorf("%s: the PodAutoscaler's dryRun was never turned off", key)
		return
	}
	f.handedOver++
	// (b)
	if act.rv < del.rv {
		t.Errorf("%s: the PodAutoscaler turned active (rv %d) before its HPA was deleted (rv %d): two active autoscalers", key, act.rv, del.rv)
	}
	gap := act.at.Sub(del.at)
	if !r.killedAt.IsZero() && del.at.Before(r.killedAt) && act.at.After(r.killedAt) {
		f.interrupted++
		f.maxInterruptedGap = max(f.maxInterruptedGap, gap)
	} else {
		if gap > f.maxGap {
			f.maxGap, f.maxGapTarget = gap, key
		}
		// A time bound: asserted under -tags faults (make test-faults), logged in make test.
		checkTiming(t.t, gap <= syncPeriod, "%s: %s between the HPA's deletion and the PodAutoscaler's dryRun off, promised within a sync period (%s)", key, gap, syncPeriod)
	}
	first, ok := firstObs(pas, func(o decisionObs) bool {
		return o.rv > act.rv && o.mode == podpilotv1alpha1.ActiveMode && o.decided
	})
	if !ok {
		t.Errorf("%s: the PodAutoscaler made no active decision after taking over", key)
		return
	}
	f.maxToRound = max(f.maxToRound, first.at.Sub(del.at))
	checkFleetChanges(t, ft, r, del, act, f)
	if b := ft.hpa.Spec.Behavior; b != nil && b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil {
		downscaleWindow = time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
	}
	checkFleetDecisions(t, key, pas, del, act, first, downscaleWindow, f)
}

// checkFleetChanges is (a) for one target.
func checkFleetChanges(t *targetCheck, ft *fleetTarget, r fleetRecord, del, act decisionObs, f *fleetFigures) {
	t.t.Helper()
	key := ft.key()
	atHandOver, firstAfter := r.initial[key], true
	upLimit := int32(math.MaxInt32)
	if b := ft.hpa.Spec.Behavior; b != nil && b.ScaleUp != nil && len(b.ScaleUp.Policies) == 1 && b.ScaleUp.Policies[0].Type == "Pods" {
		upLimit = b.ScaleUp.Policies[0].Value
	}
	for _, c := range r.changes[key] {
		if c.new-c.old > upLimit {
			t.Errorf("%s: scale-up %d→%d by %s, more than the behavior's %d pods per period", key, c.old, c.new, c.owner, upLimit)
		}
		switch {
		case c.rv < del.rv:
			f.byHPA++
			atHandOver = c.new
			if c.owner != "kube-controller-manager" {
				t.Errorf("%s: %d→%d (rv %d) written by %q while the HPA was the autoscaler", key, c.old, c.new, c.rv, c.owner)
			}
			next, ok := firstObs(r.hpas[key], func(o decisionObs) bool { return o.rv > c.rv })
			switch {
			case ok && next.deletion:
				f.unconfirmed++
			case !ok || next.desired != c.new:
				t.Errorf("%s: %d→%d (rv %d) is not the HPA's decision: its next status %s", key, c.old, c.new, c.rv, describeObs(next))
			}
		case c.rv < act.rv:
			t.Errorf("%s: %d→%d (rv %d) by %q between the HPA's deletion and the PodAutoscaler's taking over", key, c.old, c.new, c.rv, c.owner)
		default:
			f.byPodAutoscaler++
			if !strings.HasPrefix(c.owner, "podpilot") {
				t.Errorf("%s: %d→%d (rv %d) written by %q after the PodAutoscaler took over: two active autoscalers", key, c.old, c.new, c.rv, c.owner)
			}
			next, ok := firstObs(r.pas[key], func(o decisionObs) bool { return o.rv > c.rv })
			if !ok || next.desired != c.new || next.mode != podpilotv1alpha1.ActiveMode {
				t.Errorf("%s: %d→%d (rv %d) is not the PodAutoscaler's decision: its next status %s", key, c.old, c.new, c.rv, describeObs(next))
			}
			if firstAfter {
				firstAfter = false
				f.maxJump = max(f.maxJump, abs32(c.new-atHandOver))
			}
		}
	}
}

// checkFleetDecisions is (c) for one target.
func checkFleetDecisions(t *targetCheck, key string, pas []decisionObs, del, act, first decisionObs, window time.Duration, f *fleetFigures) {
	t.t.Helper()
	var dry decisionObs
	found := false
	for _, o := range pas {
		if o.rv < act.rv && o.dryRun && o.mode == podpilotv1alpha1.DryRunMode && o.decided {
			dry, found = o, true
		}
	}
	if !found {
		t.Errorf("%s: no dry-run decision before the PodAutoscaler took over", key)
		return
	}
	if sameInputs(del, dry) {
		f.dryCompared++
		compareDecisions(t, key, "the HPA's last decision", "the last dry-run decision", del, dry, dry.proposal, windowMax(pas, dry, window), f)
	}
	switch {
	case sameInputs(del, first):
		f.firstCompared++
		compareDecisions(t, key, "the HPA's last decision", "the first active decision", del, first, first.proposal, windowMax(pas, first, window), f)
	case sameInputs(dry, first):
		f.firstCompared++
		compareDecisions(t, key, "the last dry-run decision", "the first active decision", dry, first, first.proposal, windowMax(pas, first, window), f)
	}
}

// compareDecisions compares two decisions made on the same inputs. They must be equal, unless a
// window or a scaling limit held either (a rule whose result depends on when its round ran: the
// HPA's and the PodAutoscaler's rounds run at their own phases of the sync period, and the HPA's
// status is written after its round): then both must lie between the current replicas and the
// PodAutoscaler's unlimited recommendation or held, the largest recommendation it made within its
// downscale window (which that window holds: a load that moved for less than a sync period may
// have been read by its round and not the HPA's), the same move reached at another round (a
// timing difference, counted).
func compareDecisions(t *targetCheck, key, aName, bName string, a, b decisionObs, proposal, held int32, f *fleetFigures) {
	t.t.Helper()
	if a.desired == b.desired {
		return
	}
	lo, hi := min(a.current, proposal), max(a.current, proposal, held)
	if (a.timeLimited || b.timeLimited) && proposal > 0 && a.desired >= lo && a.desired <= hi && b.desired >= lo && b.desired <= hi {
		f.timing++
		return
	}
	f.beyond++
	t.Errorf("%s: %s is %d, %s %d, on the same inputs: %s; %s", key, aName, a.desired, bName, b.desired, describeObs(a), describeObs(b))
}

// windowMax is the largest recommendation (proposal) of the PodAutoscaler's observations pas
// within window before o, o's included; 0 when none is known.
func windowMax(pas []decisionObs, o decisionObs, window time.Duration) int32 {
	var m int32
	for _, p := range pas {
		if p.rv <= o.rv && o.at.Sub(p.at) <= window && p.proposal > 0 {
			m = max(m, p.proposal)
		}
	}
	return m
}

// firstObs is the first observation for which pick is true.
func firstObs(obs []decisionObs, pick func(decisionObs) bool) (decisionObs, bool) {
	for _, o := range obs {
		if pick(o) {
			return o, true
		}
	}
	return decisionObs{}, false
}

// sameInputs says whether two decisions had the same current replicas and metric values
// (within 2%).
func sameInputs(a, b decisionObs) bool {
	if a.current != b.current || len(a.metrics) != len(b.metrics) || len(a.metrics) == 0 {
		return false
	}
	for i := range a.metrics {
		if math.Abs(a.metrics[i]-b.metrics[i]) > 0.02*math.Max(math.Abs(a.metrics[i]), math.Abs(b.metrics[i])) {
			return false
		}
	}
	return true
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
