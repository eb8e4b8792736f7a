package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// memory is what the leader knows of each PodAutoscaler between its rounds, keyed by UID: the
// history the algorithm reads, whether podpilot scaled the target to zero, and the last status it
// wrote. It is the next round's input; status is its checkpoint, written after the fact. So a
// scale that happened is remembered even when the status write that records it fails, and the
// next round never rests on that write.
//
// A memory lives for one Run (one term as leader): each PodAutoscaler is seeded from its status
// when the Run first sees it (see recall), and its entry goes when the PodAutoscaler goes. It is
// safe for concurrent use; a key is synced by one worker at a time.
type memory struct {
	mu      sync.Mutex
	entries map[identity]*remembered
	uids    map[cache.ObjectName]types.UID
}

// identity is one PodAutoscaler object: its UID, and its name, which keeps objects apart that
// have no UID (they always have one in a cluster).
type identity struct {
	uid types.UID
	key cache.ObjectName
}

func identityOf(pa *podpilotv1alpha1.PodAutoscaler) identity {
	return identity{uid: pa.UID, key: cache.ObjectName{Namespace: pa.Namespace, Name: pa.Name}}
}

// remembered is one PodAutoscaler as the leader knows it.
type remembered struct {
	// history is the algorithm's state after the last round.
	history normalize.History
	// zeroKnown and zero are the ScaledToZero mark: whether podpilot holds the target at zero
	// (see decision.Input.ScaledToZero); zeroKnown is false until a status or a rescale said.
	zeroKnown, zero bool
	// replicas is the target's spec.replicas at the last round (status.currentReplicas when
	// seeded): a dry-run PodAutoscaler counts the target's changes from it.
	replicas int32
	// checkpointDesired is status.desiredReplicas when seeded, and checked whether the target was
	// compared with it (see observedSinceCheckpoint).
	checkpointDesired int32
	checked           bool
	// hold is a direction the term's first round held back (see observedSinceCheckpoint).
	hold hold
	// lastRescale is when podpilot last rescaled the target (see rescaleGap).
	lastRescale time.Time
	// written is the status podpilot last wrote, and base the resourceVersion it was written on.
	written *podpilotv1alpha1.PodAutoscaler
	base    string
	// owed is a status write the status budget deferred (see updateStatus); nil when none is owed.
	owed *podpilotv1alpha1.PodAutoscalerStatus
	// schedule is the compiled calendar and the windows last seen active (floor.go).
	schedule scheduleMemory
	// accuracy measures each metric's forecasts, by metric name (predictionstatus.go).
	accuracy map[string]*accuracy
}

func newMemory() *memory {
	return &memory{entries: map[identity]*remembered{}, uids: map[cache.ObjectName]types.UID{}}
}

// recall returns what is known of pa, seeding it from pa's status the first time pa is seen:
// its history (the newest run read back as made until lastRound, see
// normalize.FromCheckpoint), the ScaledToZero condition, status.currentReplicas and
// status.desiredReplicas. An entry of an earlier object of the same name is forgotten.
func (m *memory) recall(pa *podpilotv1alpha1.PodAutoscaler, lastRound time.Time) remembered {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := identityOf(pa)
	if uid, ok := m.uids[id.key]; ok && uid != pa.UID {
		delete(m.entries, identity{uid: uid, key: id.key})
	}
	m.uids[id.key] = pa.UID
	if e, ok := m.entries[id]; ok {
		return *e
	}
	// Without a checkpoint, or with a dry run's (whose desiredReplicas were never written to the
	// target), there is nothing to compare the target with.
	e := &remembered{history: historyOf(pa.Status, lastRound), replicas: pa.Status.CurrentReplicas,
		checkpointDesired: pa.Status.DesiredReplicas,
		checked:           pa.Status.ObservedGeneration == 0 || pa.Status.Mode == podpilotv1alpha1.DryRunMode}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero); c != nil {
		e.zeroKnown, e.zero = true, meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero)
	}
	m.entries[id] = e
	return *e
}

// update applies change to pa's entry, if it is still known.
func (m *memory) update(pa *podpilotv1alpha1.PodAutoscaler, change func(*remembered)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[identityOf(pa)]; ok {
		change(e)
	}
}

// forget drops what is known of the PodAutoscaler named key.
func (m *memory) forget(key cache.ObjectName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if uid, ok := m.uids[key]; ok {
		delete(m.entries, identity{uid: uid, key: key})
		delete(m.uids, key)
	}
}

// forgetObject drops what is known of obj, a deleted PodAutoscaler or its tombstone.
func (m *memory) forgetObject(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pa, ok := obj.(*podpilotv1alpha1.PodAutoscaler)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := identityOf(pa)
	delete(m.entries, id)
	if m.uids[id.key] == pa.UID {
		delete(m.uids, id.key)
	}
}

// base returns the newer of cached, the informer's copy of a PodAutoscaler, and the one podpilot
// last wrote: the informer may not have seen that write yet (its resourceVersion is then still
// the one the write was made on).
func (m *memory) base(cached *podpilotv1alpha1.PodAutoscaler) *podpilotv1alpha1.PodAutoscaler {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[identityOf(cached)]; ok && e.written != nil && e.base == cached.ResourceVersion {
		return e.written
	}
	return cached
}

// wrote records that written is pa's stored state after a status write made on resourceVersion
// base; a status write owed from before is no longer owed.
func (m *memory) wrote(written *podpilotv1alpha1.PodAutoscaler, base string) {
	m.update(written, func(e *remembered) {
		e.written, e.base, e.owed = written, base, nil
	})
}

// owes reports whether owed is still the status owed for pa: no status was written or owed since.
func (m *memory) owes(pa *podpilotv1alpha1.PodAutoscaler, owed *podpilotv1alpha1.PodAutoscalerStatus) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[identityOf(pa)]
	return ok && e.owed == owed
}

// known reports whether pa has been seeded in this term.
func (m *memory) known(pa *podpilotv1alpha1.PodAutoscaler) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.entries[identityOf(pa)]
	return ok
}

// merge folds the history checkpointed in stored (pa as read from the API server after a
// conflict) into what is known of pa, and returns the merged history (see normalize.Merge).
func (m *memory) merge(stored *podpilotv1alpha1.PodAutoscaler, lastRound time.Time) normalize.History {
	m.mu.Lock()
	defer m.mu.Unlock()
	theirs := historyOf(stored.Status, lastRound)
	e, ok := m.entries[identityOf(stored)]
	if !ok {
		return theirs
	}
	e.history = normalize.Merge(e.history, theirs, specconv.Behavior(stored.Spec.Behavior))
	return e.history
}

// observedSinceCheckpoint returns h with the change between the target's replicas at the
// checkpoint (status.desiredReplicas when first seen) and now recorded as a scale event at now,
// the first time an active PodAutoscaler's target is resolved after it was seeded. A leader that
// died between its scale write and its status write left that change unrecorded; counting it now
// holds the policies at least as long as the real event would have (a change made by hand in
// that gap counts too, which only holds them longer). Several lost writes before the leader died
// show as their net change: exact for one lost write, or several in one direction. It also
// returns whether this was that first time.
//
// The target's replicas are also recorded as a recommendation at now, as upstream seeds every
// autoscaler it has not seen (after each restart): the recommendations the last term made after
// its last checkpoint are lost with it (a failed status write, or one not yet due), so the
// stabilization windows hold from the term's first round.
func observedSinceCheckpoint(e remembered, h normalize.History, b *normalize.Behavior, current int32, now time.Time) (normalize.History, bool) {
	if e.checked {
		return h, false
	}
	h = normalize.RecordScaleEvent(h, b, e.checkpointDesired, current, now)
	seed := normalize.History{Recommendations: []normalize.Recommendation{{Replicas: current, Time: now, Since: now}}}
	return normalize.Merge(h, seed, b), true
}

// hold keeps rescales back until a time, per direction. A scale event counts both ways, as
// upstream's: a scale-up within a policy period lets a scale-down start from fewer replicas (and
// a scale-down lets a scale-up start from more). An event whose time or outcome is not known (a
// rescale that may have landed, a change a new leader found unrecorded, an event a new leader read
// from a checkpoint that may hold such) is recorded so that the policies of its own direction
// count it; those of the other direction wait until it leaves every period instead.
type hold struct {
	up, down time.Time
}

// holds reports whether h keeps a rescale from current to desired back at now.
func (h hold) holds(current, desired int32, now time.Time) bool {
	return (desired > current && now.Before(h.up)) || (desired < current && now.Before(h.down))
}

// after returns h extended by an event from prev to next at the given time, uncertain in the
// sense above: the other direction waits for the behavior's longest period from then.
func (h hold) after(b *normalize.Behavior, prev, next int32, at time.Time) hold {
	if b == nil || prev == next {
		return h
	}
	until := at.Add(normalize.LongestPeriod(b))
	if next > prev && until.After(h.down) {
		h.down = until
	}
	if next < prev && until.After(h.up) {
		h.up = until
	}
	return h
}

// seededHold returns the hold of a term's first round: every event of the seeded history h (read
// from a checkpoint, which cannot tell an uncertain event from another), and the change from the
// checkpoint's desired replicas to current found at now.
func seededHold(b *normalize.Behavior, h normalize.History, checkpoint, current int32, now time.Time) hold {
	var held hold
	for _, e := range h.ScaleUpEvents {
		held = held.after(b, 0, e.Change, e.Time)
	}
	for _, e := range h.ScaleDownEvents {
		held = held.after(b, e.Change, 0, e.Time)
	}
	return held.after(b, checkpoint, current, now)
}

// lastRescale returns when the PodAutoscaler named key was last rescaled; zero if never in this term.
func (m *memory) lastRescale(key cache.ObjectName) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[identity{uid: m.uids[key], key: key}]; ok {
		return e.lastRescale
	}
	return time.Time{}
}
