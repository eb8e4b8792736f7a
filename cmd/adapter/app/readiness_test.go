package app

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// caProvider is a CA content provider whose bundle the test sets.
type caProvider struct {
	dynamiccertificates.CAContentProvider
	bundle []byte
}

func (c *caProvider) CurrentCABundleContent() []byte { return c.bundle }

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

func TestDelegatedAuthenticationIsReadyOnlyOnceThePublishedCAsAreLoaded(t *testing.T) {
	published := map[string]string{clientCAKey: "CLIENT-CA\n", requestHeaderCAKey: "FRONT-PROXY-CA\n"}
	ca := &caProvider{}
	check := authnCheck(ca, []string{clientCAKey, requestHeaderCAKey}, func(context.Context) (map[string]string, error) {
		return published, nil
	})
	req := httptest.NewRequest("GET", "/readyz", nil)
	steps := []struct {
		name   string
		loaded string
		ready  bool
	}{
		{name: "nothing loaded yet (the library's CA informers have not synced): not ready", loaded: "", ready: false},
		{name: "only the client CA loaded: requests through the aggregator would be anonymous", loaded: "CLIENT-CA", ready: false},
		{name: "both loaded: ready", loaded: "CLIENT-CA\nFRONT-PROXY-CA", ready: true},
		{name: "once ready it stays ready (a CA rotation does not flap readiness)", loaded: "", ready: true},
	}
	for _, s := range steps {
		ca.bundle = []byte(s.loaded)
		if err := check.Check(req); (err == nil) != s.ready {
			t.Errorf("%s: check error = %v, want ready=%v", s.name, err, s.ready)
		}
	}
}
