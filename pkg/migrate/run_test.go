package migrate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

const testdata = "../autoscaler/hpaconv/testdata"

// TestRunFromFiles: PodAutoscalers as YAML on stdout, in dryRun unless --dry-run-off; refusals
// and the server flags on stderr; an error (exit status 1) when any HPA was refused.
func TestRunFromFiles(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join(testdata, "every-kind.ppa.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dryRunGolden := withDryRun(t, string(golden))
	tests := []struct {
		name       string
		files      []string
		stdin      string
		dryRunOff  bool
		wantOut    string
		wantErrOut []string
		wantErr    error
	}{
		{name: "convertible HPAs are written in dryRun by default", files: []string{filepath.Join(testdata, "every-kind.hpa.yaml")},
			wantOut: dryRunGolden, wantErrOut: []string{"--autoscaler-sync-period=15s", "--autoscaler-tolerance=0.1"}},
		{name: "--dry-run-off writes them without dryRun", files: []string{filepath.Join(testdata, "every-kind.hpa.yaml")}, dryRunOff: true,
			wantOut: string(golden)},
		{name: "refused HPAs are named on stderr with the field and the reason, and the run fails",
			files: []string{filepath.Join(testdata, "not-convertible.hpa.yaml"), filepath.Join(testdata, "every-kind.hpa.yaml")}, wantOut: dryRunGolden,
			wantErrOut: []string{"refused: HorizontalPodAutoscaler shop/per-pod-utilization: no exact PodAutoscaler equivalent: spec.metrics[1].resource.name"},
			wantErr:    ErrIncomplete},
		{name: "- reads stdin", files: []string{"-"}, stdin: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: s, namespace: ns}\n" +
			"spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: s}, maxReplicas: 2, metrics: [{type: External, external: {metric: {name: q}, target: {type: Value, value: '1'}}}]}\n",
			wantOut: "---\napiVersion: autoscaling.podpilot.io/v1alpha1\nkind: PodAutoscaler\nmetadata:\n  annotations:\n    podpilot.io/migrated-from-hpa: s\n  name: s\n  namespace: ns\n" +
				"spec:\n  dryRun: true\n  externalMetrics:\n  - metricName: q\n    targetType: Value\n    value: \"1\"\n  maxReplicas: 2\n  scaleTargetKind: deployment\n  scaleTargetName: s\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.Files, o.DryRunOff = tc.files, tc.dryRunOff
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			err := run(t.Context(), o, nil, strings.NewReader(tc.stdin), &out, &errOut)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("run = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			for _, w := range tc.wantErrOut {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
		})
	}
}

// withDryRun returns the YAML stream docs with spec.dryRun: true in each document.
func withDryRun(t *testing.T, docs string) string {
	t.Helper()
	var out strings.Builder
	for _, doc := range strings.Split(docs, "---\n") {
		if doc == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		obj["spec"].(map[string]any)["dryRun"] = true
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n" + string(data))
	}
	return out.String()
}

// TestRunFromClusterPrintsWithoutApplying: --from-cluster without --apply reads the HPAs of the
// namespace and changes nothing.
func TestRunFromClusterPrintsWithoutApplying(t *testing.T) {
	c := newCluster(t, hpaWeb())
	o := NewOptions()
	o.FromCluster, o.Namespace = true, "shop"
	out, _, err := c.migrate(t, o)
	if err != nil || !strings.Contains(out, "name: web\n  namespace: shop\n") {
		t.Fatalf("migrate --from-cluster = %v:\n%s", err, out)
	}
	if s := c.state(t); !s.hpa || s.pa != nil {
		t.Errorf("without --apply the cluster changed: HPA present %v, PodAutoscaler %v", s.hpa, s.pa != nil)
	}
}

// TestDecided: a decision counts only for the current spec, in dryRun, with its metrics read.
func TestDecided(t *testing.T) {
	base := func() *podpilotv1alpha1.PodAutoscaler {
		pa := converted(t, true)
		pa.Generation = 2
		decide(pa)
		return pa
	}
	tests := []struct {
		name   string
		mutate func(*podpilotv1alpha1.PodAutoscaler)
		want   bool
		reason string
	}{
		{name: "a dry-run decision for the current generation with metrics read counts", mutate: func(*podpilotv1alpha1.PodAutoscaler) {}, want: true, reason: "3 -> 2 replicas"},
		{name: "a status for an older generation is stale", mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Generation = 3 }, reason: "generation 2, the spec is at 3"},
		{name: "a status without a decision does not count", mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Status.LastDecision = nil }, reason: "no dry-run decision"},
		{name: "an active mode in status does not count", mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Status.Mode = podpilotv1alpha1.ActiveMode }, reason: "no dry-run decision"},
		{name: "a decision without its metrics read does not count", mutate: func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Status.Conditions[0].Status, pa.Status.Conditions[0].Reason, pa.Status.Conditions[0].Message = metav1.ConditionFalse, "FailedGetResourceMetric", "no metrics"
		}, reason: "ScalingActive is False (FailedGetResourceMetric): no metrics"},
		{name: "a PodAutoscaler whose dryRun was turned off meanwhile does not count", mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.DryRun = false }, reason: "turned off"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pa := base()
			tc.mutate(pa)
			reason, ok := decided(pa)
			if ok != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("decided = %q, %v; want %v and %q", reason, ok, tc.want, tc.reason)
			}
		})
	}
}

// TestOptionsValidate: every inconsistent combination is reported, all at once.
func TestOptionsValidate(t *testing.T) {
	o := NewOptions()
	o.Files, o.FromCluster = []string{"x"}, false
	o.Apply, o.DryRunOff, o.Namespace = true, true, "ns"
	o.Controller.Tolerance = -1
	err := o.Validate()
	for _, want := range []string{"--namespace applies to --from-cluster only", "--apply needs --from-cluster", "--dry-run-off does not apply", "tolerance"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to say %q", err, want)
		}
	}
	if err := NewOptions().Validate(); err == nil || !strings.Contains(err.Error(), "give --from-cluster or -f FILE") {
		t.Errorf("Validate without a source = %v", err)
	}
}

// TestRunRefusesHPAsSharingATarget: two HPAs of one target are both refused (upstream scales it
// with neither, and both PodAutoscalers would refuse to); the others convert.
func TestRunRefusesHPAsSharingATarget(t *testing.T) {
	second := hpaWeb()
	second.Name = "web-too"
	blog := hpaWeb()
	blog.Namespace = "blog"
	c := newCluster(t, hpaWeb(), second, blog)
	o := NewOptions()
	o.FromCluster = true
	out, errOut, err := c.migrate(t, o)
	if !errors.Is(err, ErrIncomplete) || strings.Count(errOut, "is the target of the HorizontalPodAutoscalers web, web-too") != 2 {
		t.Fatalf("migrate = %v\nstderr:\n%s", err, errOut)
	}
	if strings.Count(out, "kind: PodAutoscaler") != 1 || !strings.Contains(out, "namespace: blog") {
		t.Errorf("want only blog/web's PodAutoscaler:\n%s", out)
	}
}
