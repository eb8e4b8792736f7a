package prometheus

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCredentialFilesAreReReadOnEveryRequest(t *testing.T) {
	tests := []struct {
		name   string
		set    func(o *Options, file string)
		header string
		want   []string
	}{{
		name:   "a rotated bearer token is sent at the next request",
		set:    func(o *Options, file string) { o.BearerTokenFile = file },
		header: "Authorization",
		want:   []string{"Bearer first", "Bearer rotated"},
	}, {
		name:   "a header file's new content is sent at the next request, trimmed",
		set:    func(o *Options, file string) { o.HeaderFiles = []string{"X-Scope-OrgID=" + file} },
		header: "X-Scope-OrgID",
		want:   []string{"first", "rotated"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := fakeProm(t, "", nil)
			file := writeFile(t, "secret", "first\n")
			o := optionsFor(srv.URL)
			tc.set(o, file)
			c := newTestClient(t, o, nil)
			var got []string
			for _, content := range []string{"first\n", "  rotated  "} {
				if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Query(t.Context(), "up", time.Time{}); err != nil {
					t.Fatalf("Query() = %v", err)
				}
				got = append(got, (<-seen).header.Get(tc.header))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s headers (-want +got):\n%s", tc.header, diff)
			}
		})
	}
}

func TestAHeaderFileThatIsGoneFailsTheCallNamingTheFile(t *testing.T) {
	srv, _ := fakeProm(t, "", nil)
	secret := writeFile(t, "org", "tenant-a\n")
	o := optionsFor(srv.URL)
	o.HeaderFiles = []string{"X-Scope-OrgID=" + secret}
	c := newTestClient(t, o, nil)
	if err := os.Remove(secret); err != nil {
		t.Fatal(err)
	}
	_, err := c.Query(t.Context(), "up", time.Time{})
	if err == nil || !strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "tenant-a") {
		t.Errorf("Query() with the header file gone = %v, want an error naming the file and not its last value", err)
	}
}

func TestBasicAuthUsesThePasswordFile(t *testing.T) {
	srv, seen := fakeProm(t, "", nil)
	o := optionsFor(srv.URL)
	o.BasicAuthUsername = "adapter"
	o.BasicAuthPasswordFile = writeFile(t, "password", "s3cret\n")
	c := newTestClient(t, o, nil)
	if _, err := c.Series(t.Context(), []string{"up"}, time.Time{}, time.Time{}); err != nil {
		t.Fatalf("Series() = %v", err)
	}
	r := (<-seen)
	req := &http.Request{Header: r.header}
	user, pass, ok := req.BasicAuth()
	if !ok || user != "adapter" || pass != "s3cret" {
		t.Errorf("basic auth = %q, %q, %t; want adapter, s3cret", user, pass, ok)
	}
}

func TestExtraHeadersArrive(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			srv, seen := fakeProm(t, "", nil)
			o := optionsFor(srv.URL)
			o.Method = method
			o.Headers = []string{"X-Scope-OrgID=tenant-a", "X-Multi=1", "X-Multi=2"}
			c := newTestClient(t, o, nil)
			if _, err := c.Query(t.Context(), "up", time.Time{}); err != nil {
				t.Fatalf("Query() = %v", err)
			}
			h := (<-seen).header
			if got := h.Get("X-Scope-OrgID"); got != "tenant-a" {
				t.Errorf("X-Scope-OrgID = %q, want tenant-a", got)
			}
			if diff := cmp.Diff([]string{"1", "2"}, h.Values("X-Multi")); diff != "" {
				t.Errorf("X-Multi (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTLSWithCAFileAndClientCert(t *testing.T) {
	pki := newTestPKI(t)
	seen := make(chan seenRequest, 4)
	srv := httptest.NewUnstartedServer(promHandler("", nil, seen))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{pki.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.pool,
		MinVersion:   tls.VersionTLS12,
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes below are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)

	tests := []struct {
		name    string
		modify  func(*Options)
		wantErr error
	}{{
		name: "the CA file verifies the server and the client cert is accepted",
		modify: func(o *Options) {
			o.CAFile, o.ClientCert, o.ClientKey = pki.caFile, pki.clientCertFile, pki.clientKeyFile
		},
	}, {
		name:    "without the CA file the server is not trusted",
		modify:  func(o *Options) { o.ClientCert, o.ClientKey = pki.clientCertFile, pki.clientKeyFile },
		wantErr: ErrUnavailable,
	}, {
		name:    "without a client cert the server refuses the handshake",
		modify:  func(o *Options) { o.CAFile = pki.caFile },
		wantErr: ErrUnavailable,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := optionsFor(srv.URL)
			tc.modify(o)
			_, err := newTestClient(t, o, nil).Query(t.Context(), "up", time.Time{})
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Query() = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, the CA and the client pair written to files.
type testPKI struct {
	pool           *x509.CertPool
	server         tls.Certificate
	caFile         string
	clientCertFile string
	clientKeyFile  string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "podpilot test ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		key := newKey(t)
		der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  ips,
		}, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	serverCert, serverKey := issue(2, "prometheus", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	server, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey := issue(3, "podpilot", x509.ExtKeyUsageClientAuth, nil)
	return testPKI{
		pool:           pool,
		server:         server,
		caFile:         writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))),
		clientCertFile: writeFile(t, "client.pem", string(clientCert)),
		clientKeyFile:  writeFile(t, "client-key.pem", string(clientKey)),
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// writeFile writes content to name in a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), strings.ReplaceAll(name, "/", "_"))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
