package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
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
// metrics discovery pass, the shared pod cache, and delegated authentication able to
// authenticate (the CAs loaded).
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
	pods := cache.ForResource(podsResource()).Informer()
	checks := []healthz.HealthChecker{
		p.HealthChecker(),
		healthz.NamedCheck("pod-cache", func(*http.Request) error {
			if !pods.HasSynced() {
				return errors.New("the pod informer has not synced")
			}
			return nil
		}),
		authnCheck(cfg.GenericConfig.SecureServing.ClientCA, wanted, func(ctx context.Context) (map[string]string, error) {
			cm, err := kube.CoreV1().ConfigMaps(authConfigMapNamespace).Get(ctx, authConfigMapName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("get configmap %s/%s: %w", authConfigMapNamespace, authConfigMapName, err)
			}
			return cm.Data, nil
		}),
	}
	if err := server.AddReadyzChecks(checks...); err != nil {
		return fmt.Errorf("add readiness checks: %w", err)
	}
	return nil
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
// publishes under the wanted keys is one the server verifies client certificates with. The
// apiserver library loads those CAs from an informer only after it starts serving, so until
// then a request forwarded by kube-apiserver (or sent with a client certificate) is
// anonymous and answers 401 or 403. Once passed, it stays passed.
func authnCheck(clientCA dynamiccertificates.CAContentProvider, wanted []string,
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
		var loaded []byte
		if clientCA != nil {
			loaded = clientCA.CurrentCABundleContent()
		}
		if err := caLoaded(data, wanted, loaded); err != nil {
			return err
		}
		passed.Store(true)
		return nil
	})
}

// caLoaded reports which published CA bundles (data under the wanted keys) are not part of the
// loaded bundle.
func caLoaded(data map[string]string, wanted []string, loaded []byte) error {
	var missing []string
	for _, key := range wanted {
		want := strings.TrimSpace(data[key])
		if want != "" && !bytes.Contains(loaded, []byte(want)) {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("client CAs %s of configmap %s/%s not loaded yet", strings.Join(missing, ", "),
			authConfigMapNamespace, authConfigMapName)
	}
	return nil
}
