package hpaconv

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecode: HPAs are read from multi-document YAML and from Lists; anything else, and any
// field autoscaling/v2 does not have, is an error naming the document.
func TestDecode(t *testing.T) {
	const one = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: %s}\nspec: {maxReplicas: 3}\n"
	doc := func(name string) string { return strings.ReplaceAll(one, "%s", name) }
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
		is      error
	}{
		{name: "documents separated by --- are each read, empty ones skipped", in: doc("a") + "---\n---\n" + doc("b"), want: []string{"a", "b"}},
		{name: "a List's items are read, as kubectl get -o yaml prints them",
			in: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: c}, spec: {maxReplicas: 1}}\n", want: []string{"c"}},
		{name: "JSON is read too", in: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"j"},"spec":{"maxReplicas":1}}`, want: []string{"j"}},
		{name: "an autoscaling/v1 HPA is an error", in: "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: old}\n",
			wantErr: "f.yaml: document 0: autoscaling/v1 HorizontalPodAutoscaler", is: ErrNotAnHPA},
		{name: "another kind is an error", in: doc("a") + "---\napiVersion: apps/v1\nkind: Deployment\n", wantErr: "f.yaml: document 1: apps/v1 Deployment", is: ErrNotAnHPA},
		{name: "a field autoscaling/v2 does not have is an error, never dropped",
			in: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: x}\nspec: {maxReplicas: 3, scaleToZero: true}\n", wantErr: `unknown field "scaleToZero"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hpas, err := Decode("f.yaml", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Fatalf("Decode error = %v, want one containing %q (is %v)", err, tc.wantErr, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			var names []string
			for _, h := range hpas {
				names = append(names, h.Name)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("HPAs (-want +got):\n%s", diff)
			}
		})
	}
}
