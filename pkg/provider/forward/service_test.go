package forward

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// With --external-metrics-forward, podpilot connects to the Service's cluster IP and port and
// verifies the certificate for name.namespace.svc, as the aggregator does: a certificate for
// that name is accepted, one for another name is not.
func TestForwardToServiceVerifiesItsName(t *testing.T) {
	tests := []struct {
		name     string
		certHost string
		wantOK   bool
	}{
		{name: "a certificate for the Service's name.namespace.svc is trusted", certHost: "keda-metrics.keda.svc", wantOK: true},
		{name: "a certificate for another name is refused, even from the trusted CA", certHost: "other.keda.svc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(tt.certHost, nil, []string{tt.certHost})
			if err != nil {
				t.Fatal(err)
			}
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			var got atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				got.Add(1)
				_, _ = w.Write([]byte(`{"items":[]}`))
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
			srv.StartTLS()
			t.Cleanup(srv.Close)
			host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			p := serviceProvider(t, certPEM, host, port)

			ctx := callerContext(t, hpaCaller, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus")
			_, err = p.GetExternalMetric(ctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "s0-prometheus"})
			if tt.wantOK && (err != nil || got.Load() != 1) {
				t.Fatalf("forwarded %d requests, err %v; want one answered", got.Load(), err)
			}
			if !tt.wantOK && (err == nil || got.Load() != 0) {
				t.Fatalf("forwarded %d requests, err %v; want the certificate refused", got.Load(), err)
			}
		})
	}
}

// serviceProvider forwards to Service keda/keda-metrics whose cluster IP is host, trusting ca.
func serviceProvider(t *testing.T, ca []byte, host, port string) *Provider {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(&corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "keda", Name: "keda-metrics"},
		Spec:       corev1.ServiceSpec{ClusterIP: host},
	})
	opts := NewOptions()
	opts.Service, opts.CAFile = "keda/keda-metrics:"+port, caFile
	p, err := New(Config{Options: *opts, Local: &fakeLocal{}, Own: &rest.Config{BearerToken: podpilotToken}, Services: client.CoreV1(),
		Authorizer: authorizer.AuthorizerFunc((&recordingAuthz{decision: authorizer.DecisionAllow}).Authorize)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
