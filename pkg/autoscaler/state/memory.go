package state

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// Store is what the leader knows of each PodAutoscaler between its rounds; see Memory. C is
// what the round's other concerns (schedule windows, forecast accuracy) keep of each object.
type Store[C any] interface {
	// Recall returns what is known of pa, seeding it from pa's status the first time pa is seen.
	Recall(pa *podpilotv1alpha1.PodAutoscaler, lastRound time.Time) Remembered[C]
	// Remember applies change to the entry ref names, if it is known, and reports whether it is.
	Remember(ref Ref, change func(*Remembered[C])) bool
	// Checkpoint records that written is the object's stored state after a status write made on
	// resourceVersion base.
	Checkpoint(written *podpilotv1alpha1.PodAutoscaler, base string)
	// Forget drops what is known of the object ref names.
	Forget(ref Ref)
}

// Ref names one entry: one PodAutoscaler object (its UID and name, see ObjectRef), or whichever
// object a name last named (see NameRef).
type Ref struct {
	id     identity
	byName bool
}

// ObjectRef names the entry of the object pa.
func ObjectRef(pa *podpilotv1alpha1.PodAutoscaler) Ref { return Ref{id: identityOf(pa)} }

// NameRef names the entry of the object last seen under key.
func NameRef(key cache.ObjectName) Ref { return Ref{id: identity{key: key}, byName: true} }

// Memory is what the leader knows of each PodAutoscaler between its rounds, keyed by UID: the
// history the algorithm reads, whether podpilot scaled the target to zero, and the last status it
// wrote. It is the next round's input; status is its checkpoint, written after the fact. So a
// scale that happened is remembered even when the status write that records it fails, and the
// next round never rests on that write.
//
// A Memory lives for one Run (one term as leader): each PodAutoscaler is seeded from its status
// when the Run first sees it (see Recall), and its entry goes when the PodAutoscaler goes. It is
// safe for concurrent use; a key is synced by one worker at a time.
type Memory[C any] struct {
	mu      sync.Mutex
	entries map[identity]*Remembered[C]
	uids    map[cache.ObjectName]types.UID
}

var _ Store[struct{}] = (*Memory[struct{}])(nil)

// identity is one PodAutoscaler object: its UID, and its name, which keeps objects apart that
// have no UID (they always have one in a cluster).
type identity struct {
	uid types.UID
	key cache.ObjectName
}

func identityOf(pa *podpilotv1alpha1.PodAutoscaler) identity {
	return identity{uid: pa.UID, key: cache.ObjectName{Namespace: pa.Namespace, Name: pa.Name}}
}

// Remembered is one PodAutoscaler as the leader knows it.
type Remembered[C any] struct {
	// History is the algorithm's state after the last round.
	History normalize.History
	// ZeroKnown and Zero are the ScaledToZero mark: whether podpilot holds the target at zero
	// (see decision.Input.ScaledToZero); ZeroKnown is false until a status or a rescale said.
	ZeroKnown, Zero bool
	// Replicas is the target's spec.replicas at the last round (status.currentReplicas when
	// seeded): a dry-run PodAutoscaler counts the target's changes from it.
	Replicas int32
	// CheckpointDesired is status.desiredReplicas when seeded, and Checked whether the target was
	// compared with it (see ObservedSinceCheckpoint).
	CheckpointDesired int32
	Checked           bool
	// Hold is a direction the term's first round held back (see ObservedSinceCheckpoint).
	Hold Hold
	// LastRescale is when podpilot last rescaled the target.
	LastRescale time.Time
	// Fallbacks is where each External metric's fallback stood after the last round, by metric
	// (status.currentMetrics' fallbackStatus and firstFailureTime when seeded).
	Fallbacks map[decision.MetricID]FallbackMark
	// Written is the status podpilot last wrote, and Base the resourceVersion it was written on.
	Written *podpilotv1alpha1.PodAutoscaler
	Base    string
	// Owed is a status write the status budget deferred; nil when none is owed.
	Owed *podpilotv1alpha1.PodAutoscalerStatus
	// Concerns is what the round's other concerns keep of the object.
	Concerns C
}

// New returns an empty Memory.
func New[C any]() *Memory[C] {
	return &Memory[C]{entries: map[identity]*Remembered[C]{}, uids: map[cache.ObjectName]types.UID{}}
}

// Recall returns what is known of pa, seeding it from pa's status the first time pa is seen:
// its history (the newest run read back as made until lastRound, see
// normalize.FromCheckpoint), the ScaledToZero condition, status.currentReplicas,
// status.desiredReplicas and the External metrics' fallbacks (see FallbacksOf). An entry of an earlier object of the same name is forgotten.
func (m *Memory[C]) Recall(pa *podpilotv1alpha1.PodAutoscaler, lastRound time.Time) Remembered[C] {
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
	e := &Remembered[C]{History: HistoryOf(pa.Status, lastRound), Replicas: pa.Status.CurrentReplicas,
		CheckpointDesired: pa.Status.DesiredReplicas, Fallbacks: FallbacksOf(pa.Status),
		Checked: pa.Status.ObservedGeneration == 0 || pa.Status.Mode == podpilotv1alpha1.DryRunMode}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero); c != nil {
		e.ZeroKnown, e.Zero = true, meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero)
	}
	m.entries[id] = e
	return *e
}

// resolve returns the identity ref names. m.mu is held.
func (m *Memory[C]) resolve(ref Ref) identity {
	if ref.byName {
		return identity{uid: m.uids[ref.id.key], key: ref.id.key}
	}
	return ref.id
}

// Remember applies change to the entry ref names, if it is still known, and reports whether it is.
func (m *Memory[C]) Remember(ref Ref, change func(*Remembered[C])) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[m.resolve(ref)]
	if ok {
		change(e)
	}
	return ok
}

// Forget drops what is known of the object ref names: by NameRef, whichever object the name last
// named; by ObjectRef (a deleted PodAutoscaler), that object, and its name only if it still
// names it.
func (m *Memory[C]) Forget(ref Ref) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ref.byName {
		if uid, ok := m.uids[ref.id.key]; ok {
			delete(m.entries, identity{uid: uid, key: ref.id.key})
			delete(m.uids, ref.id.key)
		}
		return
	}
	delete(m.entries, ref.id)
	if m.uids[ref.id.key] == ref.id.uid {
		delete(m.uids, ref.id.key)
	}
}

// ForgetMatching drops what is known of every object whose name match accepts, and returns how
// many objects it dropped: those of a bucket of PodAutoscalers this replica no longer owns.
func (m *Memory[C]) ForgetMatching(match func(cache.ObjectName) bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id := range m.entries {
		if match(id.key) {
			delete(m.entries, id)
			n++
		}
	}
	for key := range m.uids {
		if match(key) {
			delete(m.uids, key)
		}
	}
	return n
}

// Checkpoint records that written is pa's stored state after a status write made on
// resourceVersion base; a status write owed from before is no longer owed.
func (m *Memory[C]) Checkpoint(written *podpilotv1alpha1.PodAutoscaler, base string) {
	m.Remember(ObjectRef(written), func(e *Remembered[C]) {
		e.Written, e.Base, e.Owed = written, base, nil
	})
}

// Len returns how many objects are known.
func (m *Memory[C]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// ForgetObject drops what is known of obj, a deleted PodAutoscaler or its tombstone: an
// informer's DeleteFunc.
func ForgetObject[C any](s Store[C], obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pa, ok := obj.(*podpilotv1alpha1.PodAutoscaler)
	if !ok {
		return
	}
	s.Forget(ObjectRef(pa))
}

// Base returns the newer of cached, the informer's copy of a PodAutoscaler, and the one podpilot
// last wrote: the informer may not have seen that write yet (its resourceVersion is then still
// the one the write was made on).
func Base[C any](s Store[C], cached *podpilotv1alpha1.PodAutoscaler) *podpilotv1alpha1.PodAutoscaler {
	base := cached
	s.Remember(ObjectRef(cached), func(e *Remembered[C]) {
		if e.Written != nil && e.Base == cached.ResourceVersion {
			base = e.Written
		}
	})
	return base
}

// Owes reports whether owed is still the status owed for pa: no status was written or owed since.
func Owes[C any](s Store[C], pa *podpilotv1alpha1.PodAutoscaler, owed *podpilotv1alpha1.PodAutoscalerStatus) bool {
	still := false
	s.Remember(ObjectRef(pa), func(e *Remembered[C]) { still = e.Owed == owed })
	return still
}

// Known reports whether pa has been seeded in this term.
func Known[C any](s Store[C], pa *podpilotv1alpha1.PodAutoscaler) bool {
	return s.Remember(ObjectRef(pa), func(*Remembered[C]) {})
}

// LastRescale returns when the PodAutoscaler named key was last rescaled; zero if never in this term.
func LastRescale[C any](s Store[C], key cache.ObjectName) time.Time {
	var at time.Time
	s.Remember(NameRef(key), func(e *Remembered[C]) { at = e.LastRescale })
	return at
}
