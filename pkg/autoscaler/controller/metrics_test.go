package controller

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	compbasemetrics "k8s.io/component-base/metrics"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/telemetry"
)

// metricsFixture is a fixture whose controller records into its own registry.
func metricsFixture(t *testing.T, custom customFunc, perObject bool, objs ...runtime.Object) (*fixture, compbasemetrics.KubeRegistry) {
	t.Helper()
	return ownedMetricsFixture(t, custom, perObject, nil, objs...)
}

// ownedMetricsFixture is metricsFixture with the controller's Ownership (nil: every object).
func ownedMetricsFixture(t *testing.T, custom customFunc, perObject bool, owner Ownership, objs ...runtime.Object) (*fixture, compbasemetrics.KubeRegistry) {
	t.Helper()
	f := newFixture(t, custom, nil, objs...)
	reg := compbasemetrics.NewKubeRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := *NewOptions()
	opts.PerObjectMetrics = perObject
	f.ctrl, err = New(Config{
		KubeClient: f.kube, PodpilotClient: f.podpilot, KubeInformers: f.kubeInf, PodpilotInformers: f.ppInf,
		Recorder: f.recorder, Clock: f.clock, Options: opts, Metrics: m, CustomSource: custom, Ownership: owner,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, reg
}

// series gathers reg and returns the samples of the named metrics as "name{labels} value" lines,
// histograms as their _count.
func series(t *testing.T, reg compbasemetrics.KubeRegistry, names ...string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if len(names) > 0 && !slices.Contains(names, mf.GetName()) {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			name, v := mf.GetName(), 0.0
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				name, v = name+"_count", float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, name+"{"+strings.Join(labels, ",")+"} "+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	slices.Sort(out)
	return out
}

const (
	reconciliations = "podpilot_horizontal_pod_autoscaler_controller_reconciliations_total"
	reconcileDur    = "podpilot_horizontal_pod_autoscaler_controller_reconciliation_duration_seconds"
	computations    = "podpilot_horizontal_pod_autoscaler_controller_metric_computation_total"
	computationDur  = "podpilot_horizontal_pod_autoscaler_controller_metric_computation_duration_seconds"
)

func TestReconciliationsAreCountedByActionAndError(t *testing.T) {
	tests := []struct {
		name   string
		custom customFunc
		objs   []runtime.Object
		want   []string
	}{
		{
			name: "a scale-up from 2 to 3 is action scale_up, error none, for the sync and its Pods metric",
			objs: append(seedPods(2), seedDeployment(2), seedAutoscaler()), custom: qpsPerPod("3000", podNames(2)...),
			want: []string{
				computationDur + "_count{action=scale_up,error=none,metric_type=Pods} 1",
				computations + "{action=scale_up,error=none,metric_type=Pods} 1",
				reconcileDur + "_count{action=scale_up,error=none} 1",
				reconciliations + "{action=scale_up,error=none} 1",
			},
		},
		{
			name: "a metric within tolerance is action none",
			objs: append(seedPods(2), seedDeployment(2), seedAutoscaler()), custom: qpsPerPod("2000", podNames(2)...),
			want: []string{
				computationDur + "_count{action=none,error=none,metric_type=Pods} 1",
				computations + "{action=none,error=none,metric_type=Pods} 1",
				reconcileDur + "_count{action=none,error=none} 1",
				reconciliations + "{action=none,error=none} 1",
			},
		},
		{
			name: "Prometheus failing is an internal error of the metric and of the sync, which changes nothing",
			objs: append(seedPods(2), seedDeployment(2), seedAutoscaler()), custom: failingCustom(errProm),
			want: []string{
				computationDur + "_count{action=none,error=internal,metric_type=Pods} 1",
				computations + "{action=none,error=internal,metric_type=Pods} 1",
				reconcileDur + "_count{action=none,error=internal} 1",
				reconciliations + "{action=none,error=internal} 1",
			},
		},
		{
			name: "a missing scale target is an internal error, as upstream's failed scale query",
			objs: []runtime.Object{seedAutoscaler()},
			want: []string{
				reconcileDur + "_count{action=none,error=internal} 1",
				reconciliations + "{action=none,error=internal} 1",
			},
		},
		{
			name: "a target without a selector is a spec error",
			objs: []runtime.Object{seedAutoscaler(), func() runtime.Object {
				d := seedDeployment(2)
				d.Spec.Selector = nil
				return d
			}()},
			want: []string{
				reconcileDur + "_count{action=none,error=spec} 1",
				reconciliations + "{action=none,error=spec} 1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, reg := metricsFixture(t, tt.custom, true, tt.objs...)
			_ = f.sync()
			got := series(t, reg, reconciliations, reconcileDur, computations, computationDur)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodAutoscalerSeriesFollowTheObjectsWhileLeading(t *testing.T) {
	f, reg := metricsFixture(t, qpsPerPod("3000", podNames(2)...), true, append(seedPods(2), seedDeployment(2), seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.ResourceMetrics = nil
	}))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	// Re-read the written status into the informer, as a watch would.
	replace(t, f.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), []podpilotv1alpha1.PodAutoscaler{*f.autoscaler()})

	if got := series(t, reg, "podpilot_podautoscaler_desired_replicas"); len(got) != 0 {
		t.Errorf("not leading: %q, want no series", got)
	}
	f.ctrl.running.Store(true)
	want := []string{
		"podpilot_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers{} 1",
		"podpilot_podautoscaler_condition{condition=AbleToScale,name=hpa-vg1-vanguard,namespace=dns,status=false} 0",
		"podpilot_podautoscaler_condition{condition=AbleToScale,name=hpa-vg1-vanguard,namespace=dns,status=true} 1",
		"podpilot_podautoscaler_condition{condition=AbleToScale,name=hpa-vg1-vanguard,namespace=dns,status=unknown} 0",
		"podpilot_podautoscaler_condition{condition=ScaledToZero,name=hpa-vg1-vanguard,namespace=dns,status=false} 1",
		"podpilot_podautoscaler_condition{condition=ScaledToZero,name=hpa-vg1-vanguard,namespace=dns,status=true} 0",
		"podpilot_podautoscaler_condition{condition=ScaledToZero,name=hpa-vg1-vanguard,namespace=dns,status=unknown} 0",
		"podpilot_podautoscaler_condition{condition=ScalingActive,name=hpa-vg1-vanguard,namespace=dns,status=false} 0",
		"podpilot_podautoscaler_condition{condition=ScalingActive,name=hpa-vg1-vanguard,namespace=dns,status=true} 1",
		"podpilot_podautoscaler_condition{condition=ScalingActive,name=hpa-vg1-vanguard,namespace=dns,status=unknown} 0",
		"podpilot_podautoscaler_condition{condition=ScalingLimited,name=hpa-vg1-vanguard,namespace=dns,status=false} 1",
		"podpilot_podautoscaler_condition{condition=ScalingLimited,name=hpa-vg1-vanguard,namespace=dns,status=true} 0",
		"podpilot_podautoscaler_condition{condition=ScalingLimited,name=hpa-vg1-vanguard,namespace=dns,status=unknown} 0",
		"podpilot_podautoscaler_condition{condition=SelectorOverlap,name=hpa-vg1-vanguard,namespace=dns,status=false} 1",
		"podpilot_podautoscaler_condition{condition=SelectorOverlap,name=hpa-vg1-vanguard,namespace=dns,status=true} 0",
		"podpilot_podautoscaler_condition{condition=SelectorOverlap,name=hpa-vg1-vanguard,namespace=dns,status=unknown} 0",
		"podpilot_podautoscaler_current_replicas{name=hpa-vg1-vanguard,namespace=dns} 2",
		"podpilot_podautoscaler_desired_replicas{name=hpa-vg1-vanguard,namespace=dns} 3",
		"podpilot_podautoscaler_max_replicas{name=hpa-vg1-vanguard,namespace=dns} 5",
		"podpilot_podautoscaler_metric_target{metric=zdns_vanguard_qps,metric_type=Custom,name=hpa-vg1-vanguard,namespace=dns,target_type=AverageValue} 2000",
		"podpilot_podautoscaler_metric_value{metric=zdns_vanguard_qps,metric_type=Custom,name=hpa-vg1-vanguard,namespace=dns,target_type=AverageValue} 3000",
		"podpilot_podautoscaler_min_replicas{name=hpa-vg1-vanguard,namespace=dns} 1",
	}
	got := series(t, reg, "podpilot_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers",
		"podpilot_podautoscaler_condition", "podpilot_podautoscaler_current_replicas", "podpilot_podautoscaler_desired_replicas",
		"podpilot_podautoscaler_max_replicas", "podpilot_podautoscaler_metric_target", "podpilot_podautoscaler_metric_value",
		"podpilot_podautoscaler_min_replicas")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}

	replace(t, f.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), []podpilotv1alpha1.PodAutoscaler{})
	got = series(t, reg, "podpilot_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers", "podpilot_podautoscaler_desired_replicas")
	if diff := cmp.Diff([]string{"podpilot_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers{} 0"}, got); diff != "" {
		t.Errorf("after the PodAutoscaler is deleted (-want +got):\n%s", diff)
	}
}

func TestPerObjectSeriesCanBeTurnedOff(t *testing.T) {
	f, reg := metricsFixture(t, qpsPerPod("3000", podNames(2)...), false, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.ctrl.running.Store(true)
	for _, s := range series(t, reg) {
		if strings.HasPrefix(s, "podpilot_podautoscaler_") {
			t.Errorf("per-object series %s with --autoscaler-per-object-metrics=false", s)
		}
	}
}

func TestPerObjectSeriesComeOnlyFromTheReplicaThatOwnsTheObject(t *testing.T) {
	owner := &ownedKeys{ctx: t.Context(), keys: map[cache.ObjectName]bool{}}
	f, reg := ownedMetricsFixture(t, qpsPerPod("3000", podNames(2)...), true, owner, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	f.seedCaches()
	f.ctrl.running.Store(true)
	const count = "podpilot_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers"
	want := []string{count + "{} 1"}
	if diff := cmp.Diff(want, series(t, reg, count, "podpilot_podautoscaler_desired_replicas")); diff != "" {
		t.Errorf("another replica owns it: (-want +got):\n%s", diff)
	}
	owner.keys[paKey] = true
	want = append(want, "podpilot_podautoscaler_desired_replicas{name=hpa-vg1-vanguard,namespace=dns} 0")
	if diff := cmp.Diff(want, series(t, reg, count, "podpilot_podautoscaler_desired_replicas")); diff != "" {
		t.Errorf("this replica owns it: (-want +got):\n%s", diff)
	}
}

func TestFetcherRequestsAndSourceCallsAreCounted(t *testing.T) {
	f, reg := metricsFixture(t, qpsPerPod("3000", podNames(2)...), true, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	// The second sync reads the first's result: fresh for half a sync period.
	want := []string{
		"podpilot_autoscaler_metric_requests_total{source=custom} 2",
		"podpilot_autoscaler_metric_source_calls_total{source=custom} 1",
	}
	got := series(t, reg, "podpilot_autoscaler_metric_requests_total", "podpilot_autoscaler_metric_source_calls_total")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestErrorKindsFollowUpstream(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no error is none", nil, telemetry.ErrorNone},
		{"an unsupported target kind is spec", podpilotv1alpha1.ErrUnsupportedScaleTargetKind, telemetry.ErrorSpec},
		{"a target without a selector is spec", ErrNoSelector, telemetry.ErrorSpec},
		{"Prometheus unavailable is internal", errProm, telemetry.ErrorInternal},
		{"a wrapped spec error is spec", errors.Join(errProm, ErrNoSelector), telemetry.ErrorSpec},
	}
	errorKind := func(err error) string { return telemetry.ErrorKind(err, specErrors) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorKind(tt.err); got != tt.want {
				t.Errorf("errorKind(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

func TestForecastSeriesAreLabelledByTheMetricsIdentity(t *testing.T) {
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		v := resource.MustParse("1500m")
		w := ptr.To[int32](12)
		pa.Status.Prediction = &podpilotv1alpha1.PredictionStatus{Replicas: 4, Metrics: []podpilotv1alpha1.MetricForecast{
			{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "app", Value: &v, WAPEPercent: w},
			{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "sidecar", Value: &v, WAPEPercent: w},
			{Type: podpilotv1alpha1.ObjectMetricSourceType, Name: "rps", DescribedObject: "Service/a", Value: &v},
			{Type: podpilotv1alpha1.ObjectMetricSourceType, Name: "rps", DescribedObject: "Service/b", Value: &v},
		}}
	})
	f, reg := metricsFixture(t, nil, true, pa)
	replace(t, f.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), []podpilotv1alpha1.PodAutoscaler{*pa})
	f.ctrl.running.Store(true)
	got := series(t, reg, "podpilot_podautoscaler_forecast_load", "podpilot_podautoscaler_forecast_wape_ratio")
	want := []string{
		"podpilot_podautoscaler_forecast_load{container=,metric=rps,metric_type=Object,name=hpa-vg1-vanguard,namespace=dns,object=Service/a} 1.5",
		"podpilot_podautoscaler_forecast_load{container=,metric=rps,metric_type=Object,name=hpa-vg1-vanguard,namespace=dns,object=Service/b} 1.5",
		"podpilot_podautoscaler_forecast_load{container=app,metric=cpu,metric_type=ContainerResource,name=hpa-vg1-vanguard,namespace=dns,object=} 1.5",
		"podpilot_podautoscaler_forecast_load{container=sidecar,metric=cpu,metric_type=ContainerResource,name=hpa-vg1-vanguard,namespace=dns,object=} 1.5",
		"podpilot_podautoscaler_forecast_wape_ratio{container=app,metric=cpu,metric_type=ContainerResource,name=hpa-vg1-vanguard,namespace=dns,object=} 0.12",
		"podpilot_podautoscaler_forecast_wape_ratio{container=sidecar,metric=cpu,metric_type=ContainerResource,name=hpa-vg1-vanguard,namespace=dns,object=} 0.12",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("forecast series (-want +got):\n%s", diff)
	}
}
