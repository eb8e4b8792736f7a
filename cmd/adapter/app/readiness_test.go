package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCAKeysFollowTheAuthenticationFlags(t *testing.T) {
	tests := []struct {
		name                                   string
		skipLookup, clientCAFile, requestHdrCA bool
		want                                   []string
	}{
		{name: "by default both CAs come from the cluster's configmap", want: []string{clientCAKey, requestHeaderCAKey}},
		{name: "--client-ca-file replaces the configmap's client CA", clientCAFile: true, want: []string{requestHeaderCAKey}},
		{name: "--requestheader-client-ca-file replaces the configmap's request-header CA", requestHdrCA: true, want: []string{clientCAKey}},
		{name: "--authentication-skip-lookup reads nothing from the configmap", skipLookup: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, caKeys(tt.skipLookup, tt.clientCAFile, tt.requestHdrCA)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDelegatedAuthenticationIsReadyOnlyOnceThePublishedCAsAreServed(t *testing.T) {
	clientCA, frontProxyCA := newCA(t, "client-ca"), newCA(t, "front-proxy-ca")
	published := map[string]string{clientCAKey: clientCA.pem, requestHeaderCAKey: frontProxyCA.pem}
	var asked [][]byte
	check := authnCheck([]string{clientCAKey, requestHeaderCAKey},
		func(context.Context) ([][]byte, error) { return asked, nil },
		func(context.Context) (map[string]string, error) { return published, nil })
	req := httptest.NewRequest("GET", "/readyz", nil)
	steps := []struct {
		name  string
		asked [][]byte
		ready bool
	}{
		{name: "the handshake asks for no CA yet (the library's CA informers have not synced): not ready"},
		{name: "only the front-proxy CA asked: a client certificate from the client CA is not sent, the user is anonymous",
			asked: [][]byte{frontProxyCA.subject}},
		{name: "only the client CA asked: requests through the aggregator would be anonymous", asked: [][]byte{clientCA.subject}},
		{name: "both asked: ready", asked: [][]byte{clientCA.subject, frontProxyCA.subject}, ready: true},
		{name: "once ready it stays ready (a CA rotation does not flap readiness)", ready: true},
	}
	for _, s := range steps {
		asked = s.asked
		if err := check.Check(req); (err == nil) != s.ready {
			t.Errorf("%s: check error = %v, want ready=%v", s.name, err, s.ready)
		}
	}
}

func TestTheServedHandshakeNamesTheCAsItAsksFor(t *testing.T) {
	clientCA, frontProxyCA := newCA(t, "client-ca"), newCA(t, "front-proxy-ca")
	pool := x509.NewCertPool()
	pool.AddCert(clientCA.cert)
	pool.AddCert(frontProxyCA.cert)
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	asked, err := servedClientCAs(srv.Listener)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := caServed(map[string]string{clientCAKey: clientCA.pem, requestHeaderCAKey: frontProxyCA.pem},
		[]string{clientCAKey, requestHeaderCAKey}, asked); err != nil {
		t.Errorf("both CAs are in the server's pool, the check says: %v", err)
	}
}

func TestAListenerOnAllInterfacesIsDialledOnLoopback(t *testing.T) {
	tests := []struct{ name, addr, want string }{
		{name: "IPv4 any becomes loopback", addr: "0.0.0.0:6443", want: "127.0.0.1:6443"},
		{name: "IPv6 any becomes loopback", addr: "[::]:6443", want: "127.0.0.1:6443"},
		{name: "an empty host becomes loopback", addr: ":6443", want: "127.0.0.1:6443"},
		{name: "a bound address is dialled as it is", addr: "10.0.0.7:6443", want: "10.0.0.7:6443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loopbackAddr(tt.addr)
			if err != nil || got != tt.want {
				t.Errorf("loopbackAddr(%q) = %q, %v; want %q", tt.addr, got, err, tt.want)
			}
		})
	}
}

// testCA is a self-signed CA certificate: parsed, PEM and raw subject.
type testCA struct {
	cert    *x509.Certificate
	pem     string
	subject []byte
}

func newCA(t *testing.T, name string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), subject: cert.RawSubject}
}
