package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
)

// The ConfigMap where kube-apiserver publishes the CAs that extension API servers verify
// client certificates with, and its keys.
const (
	authConfigMapNamespace = metav1.NamespaceSystem
	authConfigMapName      = "extension-apiserver-authentication"
	clientCAKey            = "client-ca-file"
	requestHeaderCAKey     = "requestheader-client-ca-file"
)

// addReadiness adds what /readyz waits for beyond the apiserver's own checks: the first
// metrics discovery pass, the object caches of the resources it serves, the shared pod cache
// (providerChecks), and delegated authentication able to authenticate (the CAs served in the
// TLS handshake).
func addReadiness(o *Options, server *genericapiserver.GenericAPIServer, p *metricsapi.Provider, cache *clusterInformers, restCfg *rest.Config) error {
	cfg, err := o.Adapter.Config() // the config Server() was built from (cached)
	if err != nil {
		return fmt.Errorf("API server config: %w", err)
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("build kubernetes client: %w", err)
	}
	authn := o.Adapter.Authentication
	wanted := caKeys(authn.SkipInClusterLookup, authn.ClientCert.ClientCA != "", authn.RequestHeader.ClientCAFile != "")
	checks := append(providerChecks(p, cache.ForResource(podsResource()).Informer().HasSynced),
		authnCheck(wanted, servedClientCAs(cfg.GenericConfig.SecureServing.Listener), func(ctx context.Context) (map[string]string, error) {
			cm, err := kube.CoreV1().ConfigMaps(authConfigMapNamespace).Get(ctx, authConfigMapName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("get configmap %s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
			}
			return cm.Data, nil
		}))
	if err := server.AddReadyzChecks(checks...); err != nil {
		return fmt.Errorf("add readiness checks: %w", err)
	}
	return nil
}

// providerChecks are the readiness checks of the metrics provider: each backend's first
// discovery (metrics-backend-<name>, so that /readyz?verbose names the backend), its first
// discovery pass,
// the object cache of every resource that pass serves custom metrics for (so that no request
// after ready waits for a cache to fill), and the shared pod cache (podsSynced), which the
// autoscaler reads too.
func providerChecks(p *metricsapi.Provider, podsSynced func() bool) []healthz.HealthChecker {
	return append(p.BackendHealthCheckers(),
		p.HealthChecker(),
		p.ObjectCachesHealthChecker(),
		healthz.NamedCheck("pod-cache", func(*http.Request) error {
			if !podsSynced() {
				return errors.New("the pod informer has not synced")
			}
			return nil
		}),
	)
}

// caKeys returns the keys of the authentication ConfigMap whose CAs podpilot loads from it:
// none when in-cluster lookup is skipped, and not those replaced by a file flag.
func caKeys(skipLookup, clientCAFile, requestHeaderCAFile bool) []string {
	if skipLookup {
		return nil
	}
	var keys []string
	if !clientCAFile {
		keys = append(keys, clientCAKey)
	}
	if !requestHeaderCAFile {
		keys = append(keys, requestHeaderCAKey)
	}
	return keys
}

// authnCheck is the "delegated-authentication" check: it passes once every CA the cluster
// publishes under the wanted keys is one the server's TLS handshake asks client certificates
// from. The apiserver library loads those CAs from an informer only after it starts serving,
// and rebuilds its TLS configuration from them later still, on its own queue. Until then a
// client (kube-apiserver's aggregator with its front-proxy certificate, or a user with a client
// certificate) is not asked for a certificate its CA signed, sends none, and is anonymous:
// 401 or 403. Asking the served handshake itself, rather than the loaded bundle, closes that
// gap (issue 10 and its recurrence). Once passed, it stays passed.
func authnCheck(wanted []string, served func(ctx context.Context) ([][]byte, error),
	published func(ctx context.Context) (map[string]string, error)) healthz.HealthChecker {
	var passed atomic.Bool
	return healthz.NamedCheck("delegated-authentication", func(r *http.Request) error {
		if passed.Load() || len(wanted) == 0 {
			return nil
		}
		data, err := published(r.Context())
		if err != nil {
			return err
		}
		asked, err := served(r.Context())
		if err != nil {
			return err
		}
		if err := caServed(data, wanted, asked); err != nil {
			return err
		}
		passed.Store(true)
		return nil
	})
}

// caServed reports which published CA bundles (data under the wanted keys) have a certificate
// whose subject is not among the CAs the handshake asks for.
func caServed(data map[string]string, wanted []string, asked [][]byte) error {
	var missing []string
	for _, key := range wanted {
		for _, subject := range caSubjects(data[key]) {
			if !containsBytes(asked, subject) {
				missing = append(missing, key)
				break
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("client CAs %s of configmap %s/%s not served in the TLS handshake yet", strings.Join(missing, ", "),
			authConfigMapNamespace, authConfigMapName)
	}
	return nil
}

// caSubjects returns the raw subjects of the certificates in a PEM bundle; what does not parse
// is skipped, as the apiserver library's CA loader would reject it too.
func caSubjects(bundle string) [][]byte {
	var subjects [][]byte
	rest := []byte(bundle)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return subjects
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			subjects = append(subjects, cert.RawSubject)
		}
	}
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// servedClientCAs returns a function that opens a TLS connection to the server's own secure
// listener and returns the distinguished names of the CAs its handshake asks client
// certificates from: what every client sees, whatever the library has loaded so far.
func servedClientCAs(listener net.Listener) func(ctx context.Context) ([][]byte, error) {
	return func(ctx context.Context) ([][]byte, error) {
		if listener == nil {
			return nil, errors.New("no secure listener")
		}
		addr, err := loopbackAddr(listener.Addr().String())
		if err != nil {
			return nil, err
		}
		var asked [][]byte
		dialer := tls.Dialer{
			NetDialer: &net.Dialer{Timeout: 5 * time.Second},
			Config: &tls.Config{
				InsecureSkipVerify: true, //nolint:gosec // only the handshake's certificate request is read; nothing is sent
				MinVersion:         tls.VersionTLS12,
				GetClientCertificate: func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
					asked = cri.AcceptableCAs
					return &tls.Certificate{}, nil
				},
			},
		}
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("TLS handshake with own listener %s: %w", addr, err)
		}
		_ = conn.Close()
		return asked, nil
	}
}

// loopbackAddr turns a listener's address into one to dial from the same process: an
// unspecified host (all interfaces) becomes 127.0.0.1.
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listener address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
