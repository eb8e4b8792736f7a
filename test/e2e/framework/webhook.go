package framework

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

// StatusVerdict is what a StatusWebhook answers one status write: allowed, or denied with a
// message. A verdict may take its time (the write waits for it), up to the webhook's timeout.
type StatusVerdict func(ctx context.Context, review *admissionv1.AdmissionRequest) (allowed bool, message string)

// StatusWebhook is a validating admission webhook the test serves on loopback, registered for
// UPDATEs of the status of PodAutoscalers in one namespace: the harness's way to make status
// writes fail (or hang) without any code path in podpilot knowing.
type StatusWebhook struct {
	server *http.Server
	name   string
}

// StartStatusWebhook serves verdict for the status writes of PodAutoscalers in namespace ns and
// registers it (failurePolicy Fail, timeout timeout), until the test ends.
func (c *Cluster) StartStatusWebhook(ctx context.Context, t testing.TB, ns string, timeout time.Duration, verdict StatusVerdict) *StatusWebhook {
	t.Helper()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatalf("webhook certificate: %v", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("webhook key pair: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("webhook listener: %v", err)
	}
	w := &StatusWebhook{name: "podautoscaler-status-" + rand.String(5) + ".e2e.podpilot.io"}
	w.server = &http.Server{Handler: reviewHandler(verdict), ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = w.server.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = w.server.Close() })

	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	url := fmt.Sprintf("https://%s/validate", l.Addr().String())
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: w.name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    w.name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: certPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{statusRule()},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          ptr.To(int32(timeout / time.Second)),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("register webhook: %v", err)
	}
	t.Cleanup(func() {
		err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.WithoutCancel(ctx), w.name, metav1.DeleteOptions{})
		if err != nil {
			t.Logf("delete webhook %s: %v", w.name, err)
		}
	})
	return w
}

func statusRule() admissionregistrationv1.RuleWithOperations {
	scope := admissionregistrationv1.NamespacedScope
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"autoscaling.podpilot.io"}, APIVersions: []string{"*"},
			Resources: []string{"podautoscalers/status"}, Scope: &scope},
	}
}

// reviewHandler answers AdmissionReviews with verdict.
func reviewHandler(verdict StatusVerdict) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		allowed, message := verdict(r.Context(), review.Request)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: allowed}
		if !allowed {
			review.Response.Result = &metav1.Status{Status: metav1.StatusFailure, Message: message, Code: http.StatusForbidden}
		}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})
}
