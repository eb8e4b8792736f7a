package v1alpha1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// quantityEqual compares quantities by value, as the API server does.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return data
}

// strictDecode decodes data as the API server's strict field validation
// does: field names are case-sensitive and unknown or duplicate fields fail.
func strictDecode(t *testing.T, data []byte) (*PodAutoscaler, error) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("add to scheme: %v", err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	pa, ok := obj.(*PodAutoscaler)
	if !ok {
		t.Fatalf("decoded %T, want *PodAutoscaler", obj)
	}
	return pa, nil
}

// seedExample is the seed's example (配置范例) as Go values.
func seedExample() *PodAutoscaler {
	return &PodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling.podpilot.io/v1alpha1", Kind: "PodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: "hpa-vg1-vanguard"},
		Spec: PodAutoscalerSpec{
			ScaleTargetKind: ScaleTargetDeployment,
			ScaleTargetName: "vg1-vanguard",
			MinReplicas:     ptr.To[int32](1),
			MaxReplicas:     5,
			CustomMetrics: []CustomMetricSpec{
				{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")},
			},
			ResourceMetrics: []ResourceMetricSpec{
				{ResourceName: "cpu", TargetType: UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
				{ResourceName: "memory", TargetType: AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("256Mi"))},
			},
		},
	}
}

func TestSeedExampleDecodes(t *testing.T) {
	data := readFile(t, filepath.Join("testdata", "seed-example.yaml"))
	tests := []struct {
		name   string
		decode func([]byte) (*PodAutoscaler, error)
	}{
		{
			name: "the seed example decodes with sigs.k8s.io/yaml UnmarshalStrict",
			decode: func(data []byte) (*PodAutoscaler, error) {
				var pa PodAutoscaler
				return &pa, yaml.UnmarshalStrict(data, &pa)
			},
		},
		{
			name:   "the seed example decodes with the API machinery's strict, case-sensitive decoder",
			decode: func(data []byte) (*PodAutoscaler, error) { return strictDecode(t, data) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.decode(data)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if diff := cmp.Diff(seedExample(), got, quantityEqual); diff != "" {
				t.Errorf("decoded seed example (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSeedExampleManifestMatchesTestdata(t *testing.T) {
	want := readFile(t, filepath.Join("testdata", "seed-example.yaml"))
	got := readFile(t, filepath.Join("..", "..", "..", "..", "manifests", "examples", "hpa-vg1-vanguard.yaml"))
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("manifests/examples/hpa-vg1-vanguard.yaml differs from testdata/seed-example.yaml (-want +got):\n%s", diff)
	}
}

// The seed spells one key "ResourceName"; Kubernetes field names are
// case-sensitive, so the API server's strict decoding rejects it.
func TestSeedCapitalisedResourceNameIsRejected(t *testing.T) {
	data := readFile(t, filepath.Join("testdata", "seed-example.yaml"))
	data = []byte(strings.Replace(string(data), "- resourceName: cpu", "- ResourceName: cpu", 1))
	_, err := strictDecode(t, data)
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.resourceMetrics[0].ResourceName"`) {
		t.Errorf("strict decode of the seed's ResourceName key: got error %v, want an unknown field error", err)
	}
}

func TestDeepCopyRoundTrip(t *testing.T) {
	for _, file := range []string{"seed-example.yaml", "full.yaml"} {
		t.Run("a deep copy of "+file+" equals the original and shares no memory with it", func(t *testing.T) {
			orig, err := strictDecode(t, readFile(t, filepath.Join("testdata", file)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			cp := orig.DeepCopy()
			if diff := cmp.Diff(orig, cp, quantityEqual); diff != "" {
				t.Fatalf("deep copy (-orig +copy):\n%s", diff)
			}
			mutate(cp)
			again, err := strictDecode(t, readFile(t, filepath.Join("testdata", file)))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if diff := cmp.Diff(again, orig, quantityEqual); diff != "" {
				t.Errorf("mutating the copy changed the original (-want +got):\n%s", diff)
			}
			var obj runtime.Object = orig
			if diff := cmp.Diff(obj, orig.DeepCopyObject(), quantityEqual); diff != "" {
				t.Errorf("DeepCopyObject (-orig +copy):\n%s", diff)
			}
		})
	}
}

// mutate changes every pointer, slice and map reachable from pa's spec and status.
func mutate(pa *PodAutoscaler) {
	*pa.Spec.MinReplicas = 4
	for i := range pa.Spec.ResourceMetrics {
		m := &pa.Spec.ResourceMetrics[i]
		if m.AverageUtilization != nil {
			*m.AverageUtilization = 99
		}
		if m.AverageValue != nil {
			*m.AverageValue = resource.MustParse("1")
		}
	}
	for i := range pa.Spec.CustomMetrics {
		m := &pa.Spec.CustomMetrics[i]
		m.AverageValue = resource.MustParse("1")
		if m.Selector != nil {
			m.Selector.MatchLabels["view"] = "changed"
		}
	}
	mutateKinds(pa)
	if b := pa.Spec.Behavior; b != nil {
		*b.ScaleUp.StabilizationWindowSeconds = 7
		b.ScaleUp.Policies[0].Value = 7
		*b.ScaleUp.Tolerance = resource.MustParse("1")
		*b.ScaleDown.SelectPolicy = DisabledPolicySelect
	}
	s := &pa.Status
	for i := range s.CurrentMetrics {
		s.CurrentMetrics[i].Name = "changed"
	}
	for i := range s.Conditions {
		s.Conditions[i].Reason = "Changed"
	}
	for i := range s.Recommendations {
		s.Recommendations[i].Replicas = 9
	}
	if s.ScaleEvents != nil {
		s.ScaleEvents.ScaleUp[0].ReplicaChange = 9
		s.ScaleEvents.ScaleDown[0].ReplicaChange = 9
	}
	if s.LastScaleTime != nil {
		s.LastScaleTime.Time = s.LastScaleTime.Add(1)
	}
}
