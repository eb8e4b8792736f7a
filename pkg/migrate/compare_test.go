package migrate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/podpilot/podpilot/pkg/replay"
)

// historySource answers range queries by the first registered substring of the query, as
// pkg/replay's tests' fake source, with a sample at every step of the range asked.
type historySource struct {
	series  []model.LabelSet
	answers map[string]float64
}

func (f *historySource) QueryRange(_ context.Context, q string, r promv1.Range, _ ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	for sub, v := range f.answers {
		if strings.Contains(q, sub) {
			s := &model.SampleStream{Metric: model.Metric{}}
			for t := r.Start; !t.After(r.End); t = t.Add(r.Step) {
				s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
			}
			return model.Matrix{s}, nil, nil, nil
		}
	}
	return model.Matrix{}, nil, nil, nil
}

func (f *historySource) Series(context.Context, []string, time.Time, time.Time, ...promv1.Option) ([]model.LabelSet, promv1.Warnings, promv1.Infos, error) {
	return f.series, nil, nil, nil
}

var _ replay.Source = (*historySource)(nil)

const (
	queueHPA = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: worker, namespace: ns}\n" +
		"spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}, minReplicas: 1, maxReplicas: 10, " +
		"metrics: [{type: External, external: {metric: {name: queue_depth}, target: {type: AverageValue, averageValue: '100'}}}]}\n"
	cpuHPA = "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: ns}\n" +
		"spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 10, " +
		"metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]}\n"
	recorded = `kube_horizontalpodautoscaler_status_desired_replicas{namespace="ns",horizontalpodautoscaler="worker"}`
)

// TestMigrateCompare: --compare replays each pair and reports it against its HPA's record; the
// run fails unless every pair was compared and agreed within one step.
func TestMigrateCompare(t *testing.T) {
	tests := []struct {
		name    string
		stdin   string
		answers map[string]float64
		want    []string
		wantErr error
	}{
		{name: "a pair whose replay equals its HPA's recorded desired replicas at every step is the same",
			stdin: queueHPA, answers: map[string]float64{"queue_depth": 400, "kube_deployment_spec_replicas": 4, recorded: 4},
			want: []string{"HorizontalPodAutoscaler ns/worker -> PodAutoscaler ns/worker", "steps compared: 5, differing: 0 (0 beyond one step)", "verdict: same\n"}},
		{name: "a pair that differs beyond one step is shown with its first steps and fails the run",
			stdin: queueHPA, answers: map[string]float64{"queue_depth": 400, "kube_deployment_spec_replicas": 4, recorded: 6},
			want: []string{"steps compared: 5, differing: 5 (5 beyond one step)", "2026-11-23T08:00:00Z  HPA 6  PodAutoscaler 4  beyond: kept its replicas",
				"verdict: differs"},
			wantErr: ErrCompareFailed},
		{name: "a pair without recorded HPA history is reported so and fails the run",
			stdin: queueHPA, answers: map[string]float64{"queue_depth": 400, "kube_deployment_spec_replicas": 4},
			want: []string{"verdict: not compared: no recorded HPA history"}, wantErr: ErrCompareFailed},
		{name: "a pair replay refuses is reported with the reason, never skipped, and fails the run",
			stdin: queueHPA + cpuHPA, answers: map[string]float64{"queue_depth": 400, "kube_deployment_spec_replicas": 4, recorded: 4},
			want:    []string{"ns/worker", "verdict: same\n", "HorizontalPodAutoscaler ns/web -> PodAutoscaler ns/web", "verdict: refused: ", "--pod-requests cpu=<quantity>"},
			wantErr: ErrCompareFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.Files, o.Compare = []string{"-"}, true
			o.Replay.From, o.Replay.To = "2026-11-23T08:00:00Z", "2026-11-23T08:01:00Z"
			o.Replay.Prometheus.URL = "http://prometheus.invalid:9090/"
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			src := &historySource{series: []model.LabelSet{{"__name__": "queue_depth", "namespace": "ns", "queue": "a"}}, answers: tc.answers}
			var out, errOut bytes.Buffer
			err := run(t.Context(), o, &Clients{History: src}, strings.NewReader(tc.stdin), &out, &errOut)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("run = %v, want %v", err, tc.wantErr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "kind: PodAutoscaler") {
				t.Errorf("--compare printed YAML:\n%s", out.String())
			}
		})
	}
}

// TestMigrateCompareValidation: --compare takes replay's history flags, checked as replay checks
// them, and does not go with --apply.
func TestMigrateCompareValidation(t *testing.T) {
	o := NewOptions()
	o.FromCluster, o.Apply, o.Compare = true, true, true
	o.Replay.Step = 0
	err := o.Validate()
	for _, w := range []string{"--compare reports and hands nothing over", "--step must be positive"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, want it to say %q", err, w)
		}
	}
}
