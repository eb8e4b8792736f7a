package forward

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestValidate(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{name: "forwarding off needs nothing", opts: Options{}},
		{name: "a Service with a CA file is valid", opts: Options{Service: "keda/keda-operator-metrics-apiserver:443", CAFile: ca, Timeout: time.Second}},
		{name: "a URL with a CA file is valid", opts: Options{URL: "https://127.0.0.1:6443", CAFile: ca, Timeout: time.Second}},
		{name: "the CA file is required: never an unverified connection", opts: Options{URL: "https://127.0.0.1:6443", Timeout: time.Second},
			want: []string{"--external-metrics-forward-ca-file is required"}},
		{name: "only https URLs", opts: Options{URL: "http://127.0.0.1:6443", CAFile: ca, Timeout: time.Second}, want: []string{"want https://host:port"}},
		{name: "a Service needs namespace, name and port", opts: Options{Service: "keda-metrics:443", CAFile: ca, Timeout: time.Second},
			want: []string{"want namespace/name:port"}},
		{name: "Service and URL exclude each other; the timeout is positive",
			opts: Options{Service: "keda/m:443", URL: "https://127.0.0.1:1", CAFile: ca},
			want: []string{"mutually exclusive", "must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.opts.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("got %v, want %d errors %v", errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestClusterIPResolver(t *testing.T) {
	svc := Service{Namespace: "keda", Name: "keda-operator-metrics-apiserver", Port: 443}
	if got, want := svc.ServerName(), "keda-operator-metrics-apiserver.keda.svc"; got != want {
		t.Fatalf("server name %q, want %q (what the aggregator verifies)", got, want)
	}
	client := fake.NewClientset()
	resolve := clusterIPResolver(svc, client.CoreV1())
	if _, err := resolve(t.Context()); err == nil {
		t.Fatal("a missing Service resolved")
	}
	_, err := client.CoreV1().Services("keda").Create(context.WithoutCancel(t.Context()), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "keda", Name: "keda-operator-metrics-apiserver"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.3.4"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := resolve(t.Context())
	if err != nil || got != "https://10.96.3.4:443" {
		t.Fatalf("resolved %q, %v; want the cluster IP and the Service port, retried after a failure", got, err)
	}
	headless := clusterIPResolver(Service{Namespace: "keda", Name: "h", Port: 443}, fake.NewClientset(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "keda", Name: "h"}, Spec: corev1.ServiceSpec{ClusterIP: "None"},
	}).CoreV1())
	if _, err := headless(t.Context()); !errors.Is(err, errNoClusterIP) {
		t.Fatalf("headless Service: %v, want errNoClusterIP", err)
	}
}
