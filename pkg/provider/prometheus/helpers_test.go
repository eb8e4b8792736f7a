package prometheus

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const (
	vectorBody = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1700000000,"3"]}]}}`
	seriesBody = `{"status":"success","data":[{"__name__":"up","pod":"a"}]}`
)

// seenRequest is what a fake Prometheus saw of one request.
type seenRequest struct {
	method string
	path   string
	query  url.Values // from the URL
	form   url.Values // from a POST body
	header http.Header
}

// fakeProm starts a server that answers /api/v1/query and /api/v1/series
// under prefix with canned success bodies, or with respond when it is set,
// and reports every request it sees.
func fakeProm(t *testing.T, prefix string, respond http.HandlerFunc) (*httptest.Server, <-chan seenRequest) {
	t.Helper()
	seen := make(chan seenRequest, 16)
	srv := httptest.NewServer(promHandler(prefix, respond, seen))
	t.Cleanup(srv.Close)
	return srv, seen
}

func promHandler(prefix string, respond http.HandlerFunc, seen chan<- seenRequest) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // for respond
		form, _ := url.ParseQuery(string(body))
		seen <- seenRequest{method: r.Method, path: r.URL.Path, query: r.URL.Query(), form: form, header: r.Header.Clone()}
		if respond != nil {
			respond(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(prefix, "/")) {
		case "/api/v1/query":
			_, _ = io.WriteString(w, vectorBody)
		case "/api/v1/series":
			_, _ = io.WriteString(w, seriesBody)
		default:
			http.NotFound(w, r)
		}
	})
}

// respondWith answers every request with code and body.
func respondWith(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if strings.HasPrefix(body, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// newTestClient builds a client through Options, as cmd/adapter does.
func newTestClient(t *testing.T, o *Options, m *Metrics) Client {
	t.Helper()
	cfg, err := o.Config()
	if err != nil {
		t.Fatalf("Config() = %v", err)
	}
	c, err := New(cfg, m)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return c
}

// optionsFor returns default options pointed at rawURL.
func optionsFor(rawURL string) *Options {
	o := NewOptions()
	o.URL = rawURL
	return o
}

// drain returns every request seen so far.
func drain(seen <-chan seenRequest) []seenRequest {
	var out []seenRequest
	for {
		select {
		case r := <-seen:
			out = append(out, r)
		default:
			return out
		}
	}
}
