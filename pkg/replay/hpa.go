package replay

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/prometheus/common/model"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// maxShownSteps is how many differing steps an HPAComparison keeps to show.
const maxShownSteps = 5

// Session replays specs over one window of one Prometheus, through one rule file: what
// `podpilot migrate --compare` builds from the options AddHistoryFlags adds.
type Session struct {
	// Source is Prometheus.
	Source Source
	// Rules are the compiled rules of the rule file.
	Rules *rules.RuleSet
	// Window is the history replayed.
	Window Window
	// Model is the load model's and the algorithm's settings.
	Model Model
	// PodName overrides the pattern of the workload's pods' names; nil derives it.
	PodName *regexp.Regexp
	// Memo shares the answers of the queries the specs ask alike.
	Memo *RangeMemo
}

// NewSession validates the history options and resolves them against c's now, reading src (nil
// connects to --prometheus-url).
func (o *Options) NewSession(c clock.PassiveClock, src Source) (*Session, error) {
	if errs := o.ValidateHistory(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid flags: %w", utilerrors.NewAggregate(errs))
	}
	w, err := o.window(c)
	if err != nil {
		return nil, err
	}
	set, err := o.ruleSet()
	if err != nil {
		return nil, err
	}
	requests, err := o.requests()
	if err != nil {
		return nil, err
	}
	if src == nil {
		if src, err = o.source(); err != nil {
			return nil, err
		}
	}
	return &Session{Source: src, Rules: set, Window: w, Model: o.model(requests), PodName: o.podNameRegex(), Memo: NewRangeMemo()}, nil
}

// DiffStep is one step where the PodAutoscaler's replay and the HPA's record differ.
type DiffStep struct {
	// Time is the step's time.
	Time time.Time
	// HPA is the HPA's recorded desired replicas; PodAutoscaler the replay's.
	HPA, PodAutoscaler int32
	// Reason is the replay's rescale reason at the step, empty when it kept its replicas.
	Reason string
	// Timing is true when the two agree one step earlier or later: a sync-period phase, within
	// the documented allowance.
	Timing bool
}

// HPAComparison is a PodAutoscaler's replay against its HPA's recorded desired replicas.
type HPAComparison struct {
	// Recorded is false when Prometheus has no recorded desired replicas of the HPA in the window.
	Recorded bool
	// Compared counts the steps with both a record and a replayed decision.
	Compared int
	// Differ counts the compared steps where the desired replicas differ; Beyond those of them
	// that are not a one-step timing difference.
	Differ, Beyond int
	// First are the first differing steps, at most maxShownSteps, those beyond the allowance
	// first.
	First []DiffStep
}

// CompareHPA replays spec over the session's window in namespace and compares each step's
// replicas with what HPA hpa recorded: kube-state-metrics'
// kube_horizontalpodautoscaler_status_desired_replicas. An error is a refusal of the spec (e.g.
// ErrUnsupportedSpec, ErrNoRule) or a failed read.
func (s *Session) CompareHPA(ctx context.Context, spec Spec, namespace, hpa string) (HPAComparison, error) {
	if err := CheckRequests(spec, &s.Model.Requests); err != nil {
		return HPAComparison{}, err
	}
	r := &Reader{Source: s.Source, Rules: s.Rules, Namespace: namespace, PodName: s.PodName, Memo: s.Memo}
	tr, err := r.Trace(ctx, spec, s.Window)
	if err != nil {
		return HPAComparison{}, err
	}
	q := fmt.Sprintf("max(kube_horizontalpodautoscaler_status_desired_replicas{namespace=%q,horizontalpodautoscaler=%q})", namespace, hpa)
	m, err := r.matrix(ctx, q, s.Window)
	if err != nil {
		return HPAComparison{}, fmt.Errorf("read the desired replicas of HorizontalPodAutoscaler %s/%s: %w", namespace, hpa, err)
	}
	var values []model.SamplePair
	for _, ss := range m {
		values = append(values, ss.Values...)
	}
	return CompareRecorded(Simulate(spec, tr, s.Model), valuesAt(values, s.Window.Times())), nil
}

// CompareRecorded compares the replay's steps with the HPA's recorded desired replicas at the
// same times (NaN where none was recorded). A differing step is a timing difference when the
// record equals the replay one step earlier or later, or the replay equals the record one step
// earlier or later: the HPA's rounds run at its own phase of the sync period, and
// kube-state-metrics' scrape adds its own delay, so a rescale lands one step apart.
func CompareRecorded(steps []Step, recorded []float64) HPAComparison {
	var c HPAComparison
	var timing []DiffStep
	for i, st := range steps {
		if i >= len(recorded) || math.IsNaN(recorded[i]) {
			continue
		}
		c.Recorded = true
		c.Compared++
		hpa := int32(math.Round(recorded[i]))
		if hpa == st.Replicas {
			continue
		}
		c.Differ++
		d := DiffStep{Time: st.Time, HPA: hpa, PodAutoscaler: st.Replicas, Reason: st.Reason, Timing: nearby(steps, recorded, i)}
		if d.Timing {
			timing = append(timing, d)
			continue
		}
		c.Beyond++
		if len(c.First) < maxShownSteps {
			c.First = append(c.First, d)
		}
	}
	for _, d := range timing {
		if len(c.First) == maxShownSteps {
			break
		}
		c.First = append(c.First, d)
	}
	return c
}

// nearby reports whether step i's record and replay meet one step earlier or later.
func nearby(steps []Step, recorded []float64, i int) bool {
	hpa := recorded[i]
	for _, j := range []int{i - 1, i + 1} {
		if j < 0 || j >= len(steps) {
			continue
		}
		if float64(steps[j].Replicas) == math.Round(hpa) {
			return true
		}
		if j < len(recorded) && !math.IsNaN(recorded[j]) && int32(math.Round(recorded[j])) == steps[i].Replicas {
			return true
		}
	}
	return false
}
