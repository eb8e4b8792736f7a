package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/calendar"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// Reasons of the ScheduleActive condition and the schedule events.
const (
	// ReasonWindowActive is the ScheduleActive reason (True) while a window's floor holds.
	ReasonWindowActive = "WindowActive"
	// ReasonNoActiveWindow is the ScheduleActive reason (False) while no window is active.
	ReasonNoActiveWindow = "NoActiveWindow"
	// ReasonInvalidSchedule is the ScheduleActive reason (False) and the Warning event of
	// schedule windows that cannot be read; no floor holds then.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonScheduleWindowStarted is the event of a window becoming active.
	ReasonScheduleWindowStarted = "ScheduleWindowStarted"
	// ReasonScheduleWindowEnded is the event of a window no longer active.
	ReasonScheduleWindowEnded = "ScheduleWindowEnded"
)

// actionSchedule is the action of the schedule events.
const actionSchedule = "Schedule"

// Memory is what the leader keeps of a PodAutoscaler's schedule windows: the calendar
// compiled for one generation of its spec (or why it did not compile), and the windows it saw
// active at the last round, seeded from status.schedules.active, so that each window's start and
// end makes one event per leader, and a new leader makes none for a window it finds going on.
type Memory struct {
	generation int64
	calendar   *calendar.Calendar
	err        error
	active     []string
	seeded     bool
}

// Floor returns the floor pa's schedule windows set at now, for the decision, and records them
// in pa's status: status.schedules, the ScheduleActive condition, and an event on rec when a
// window starts or ends (against what the leader saw last, see Memory). The calendar is compiled
// once per generation. Windows that cannot be read (admission checks their syntax, not every time
// zone or cron range) set no floor: ScheduleActive False, InvalidSchedule, and a Warning event
// when that condition is new. remember applies a change to pa's Memory in the leader's memory,
// if pa is still known.
func Floor(rec events.EventRecorder, remember func(change func(*Memory)), base, pa *podpilotv1alpha1.PodAutoscaler, now time.Time) decision.Floor {
	if len(pa.Spec.Schedules) == 0 {
		pa.Status.Schedules = nil
		if meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive) != nil { // Remove copies the list every call
			meta.RemoveStatusCondition(&pa.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive)
		}
		remember(func(m *Memory) { *m = Memory{} })
		return decision.Floor{}
	}
	var sm Memory
	remember(func(m *Memory) {
		if m.calendar == nil || m.generation != pa.Generation {
			cal, err := calendar.Compile(specconv.Windows(pa.Spec.Schedules))
			m.generation, m.calendar, m.err = pa.Generation, cal, err
		}
		if !m.seeded {
			m.active, m.seeded = activeNames(base.Status.Schedules), true
		}
		sm = *m
	})
	if sm.calendar == nil { // not remembered: pa was forgotten while this round ran
		return decision.Floor{}
	}
	if sm.err != nil {
		invalidSchedule(rec, base, pa, sm.err, now)
		return decision.Floor{}
	}
	st := sm.calendar.At(now)
	pa.Status.Schedules = scheduleStatus(st)
	setScheduleCondition(pa, st, now)
	recordWindowChanges(rec, pa, sm.active, st)
	names := activeNames(pa.Status.Schedules)
	remember(func(m *Memory) { m.active = names })
	if st.Floor == 0 {
		return decision.Floor{}
	}
	return decision.Floor{Replicas: st.Floor, Window: st.Active[0].Name}
}

// invalidSchedule records windows that cannot be read: no status.schedules, ScheduleActive False
// with the reason, and a Warning event when the condition says something new.
func invalidSchedule(rec events.EventRecorder, base, pa *podpilotv1alpha1.PodAutoscaler, err error, now time.Time) {
	msg := "no schedule floor holds: " + err.Error()
	pa.Status.Schedules = nil
	status.SetCondition(pa, podpilotv1alpha1.ConditionScheduleActive, false, ReasonInvalidSchedule, msg, now)
	prev := meta.FindStatusCondition(base.Status.Conditions, podpilotv1alpha1.ConditionScheduleActive)
	if prev == nil || prev.Reason != ReasonInvalidSchedule || prev.Message != msg {
		rec.Eventf(pa, nil, corev1.EventTypeWarning, ReasonInvalidSchedule, actionSchedule, "%s", msg)
	}
}

// scheduleStatus is status.schedules for the calendar's state st.
func scheduleStatus(st calendar.State) *podpilotv1alpha1.ScheduleStatus {
	s := &podpilotv1alpha1.ScheduleStatus{Floor: st.Floor}
	for _, o := range st.Active {
		s.Active = append(s.Active, occurrence(o))
	}
	if st.Next != nil {
		next := occurrence(*st.Next)
		s.Next = &next
	}
	return s
}

func occurrence(o calendar.Occurrence) podpilotv1alpha1.WindowOccurrence {
	return podpilotv1alpha1.WindowOccurrence{Name: o.Name, Start: metav1.NewTime(o.Start), End: metav1.NewTime(o.End), MinReplicas: o.MinReplicas}
}

// setScheduleCondition sets ScheduleActive: True naming the window whose floor holds, or False
// naming the next window.
func setScheduleCondition(pa *podpilotv1alpha1.PodAutoscaler, st calendar.State, now time.Time) {
	if len(st.Active) > 0 {
		top := st.Active[0]
		status.SetCondition(pa, podpilotv1alpha1.ConditionScheduleActive, true, ReasonWindowActive,
			fmt.Sprintf("schedule window %s holds the replicas at %d or more until %s", top.Name, st.Floor, formatTime(top.End)), now)
		return
	}
	msg := "no schedule window is active"
	if st.Next != nil {
		msg += fmt.Sprintf("; the next, %s, starts at %s", st.Next.Name, formatTime(st.Next.Start))
	}
	status.SetCondition(pa, podpilotv1alpha1.ConditionScheduleActive, false, ReasonNoActiveWindow, msg, now)
}

// recordWindowChanges emits ScheduleWindowStarted for each window active in st that was not in
// before, and ScheduleWindowEnded for each in before that no longer is.
func recordWindowChanges(rec events.EventRecorder, pa *podpilotv1alpha1.PodAutoscaler, before []string, st calendar.State) {
	for _, o := range st.Active {
		if !slices.Contains(before, o.Name) {
			rec.Eventf(pa, nil, corev1.EventTypeNormal, ReasonScheduleWindowStarted, actionSchedule,
				"Schedule window %s started: at least %d replicas until %s", o.Name, o.MinReplicas, formatTime(o.End))
		}
	}
	for _, name := range before {
		if !slices.ContainsFunc(st.Active, func(o calendar.Occurrence) bool { return o.Name == name }) {
			rec.Eventf(pa, nil, corev1.EventTypeNormal, ReasonScheduleWindowEnded, actionSchedule,
				"Schedule window %s ended", name)
		}
	}
}

// activeNames returns the names of the active windows of s, sorted.
func activeNames(s *podpilotv1alpha1.ScheduleStatus) []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Active))
	for _, o := range s.Active {
		names = append(names, o.Name)
	}
	slices.SortFunc(names, strings.Compare)
	return names
}

// UntilWindowChange returns how long from now until a schedule window of pa starts or an active
// one ends, as its status last said; 0 when none is ahead. A round is queued for that time, so a
// floor holds from its window's start, not up to a sync period later.
func UntilWindowChange(pa *podpilotv1alpha1.PodAutoscaler, now time.Time) time.Duration {
	s := pa.Status.Schedules
	if s == nil || len(pa.Spec.Schedules) == 0 {
		return 0
	}
	var times []time.Time
	if s.Next != nil {
		times = append(times, s.Next.Start.Time)
	}
	for _, o := range s.Active {
		times = append(times, o.End.Time)
	}
	var d time.Duration
	for _, t := range times {
		if until := t.Sub(now); until > 0 && (d == 0 || until < d) {
			d = until
		}
	}
	return d
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
