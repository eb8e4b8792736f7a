package framework

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// heldRequestTimeout bounds how long a held request, once released, may take at the apiserver.
const heldRequestTimeout = 30 * time.Second

// APIRequest is one request that went through an APIServerProxy, as the proxy saw it.
type APIRequest struct {
	Method, Path string
	// Held says it arrived while the proxy partitioned its client, and was forwarded at Heal.
	Held bool
	// Code is the apiserver's answer, or http.StatusBadGateway if it gave none.
	Code int
	// Answered is when the answer came.
	Answered time.Time
}

// APIServerProxy stands between one process and the kube-apiserver: a plain-HTTP reverse
// proxy that forwards with the cluster-admin credentials, records every answered request, and
// can partition its client: from then on every request is held (not refused, not closed) until
// Heal forwards them, as packets a partition delayed, and the streams open when it began (watches)
// are cut. The process is pointed at it with --lister-kubeconfig=Kubeconfig.
type APIServerProxy struct {
	// Kubeconfig is the path of a kubeconfig that talks to the apiserver through the proxy.
	Kubeconfig string

	srv  *httptest.Server
	rp   *httputil.ReverseProxy
	mu   sync.Mutex
	on   func(method, path string) bool // partition when a request matches, once armed
	cut  chan struct{}                  // closed when the partition begins
	heal chan struct{}                  // closed at Heal
	at   time.Time                      // when the partition began
	upAt time.Time                      // when it was healed
	open map[*http.Request]context.CancelFunc
	held sync.WaitGroup
	log  []APIRequest
}

// recordKey carries a request's record into the proxy's callbacks.
type recordKey struct{}

// StartAPIServerProxy starts a proxy to the cluster's apiserver, closed (held requests
// released first) when the test ends.
func (c *Cluster) StartAPIServerProxy(t testing.TB) *APIServerProxy {
	t.Helper()
	target, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatalf("parse apiserver URL %q: %v", c.Config.Host, err)
	}
	tr, err := rest.TransportFor(c.Config)
	if err != nil {
		t.Fatalf("build apiserver transport: %v", err)
	}
	p := &APIServerProxy{cut: make(chan struct{}), heal: make(chan struct{}), open: map[*http.Request]context.CancelFunc{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     tr,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			p.record(resp.Request.Context(), resp.StatusCode)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, _ error) {
			p.record(r.Context(), http.StatusBadGateway)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	p.Kubeconfig = filepath.Join(t.TempDir(), "apiserver-proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p.Kubeconfig); err != nil {
		t.Fatalf("write the proxy's kubeconfig: %v", err)
	}
	t.Cleanup(func() { p.Heal(); p.held.Wait(); p.srv.CloseClientConnections(); p.srv.Close() })
	return p
}

// PartitionOn arms the partition: it begins with the first request for which match is true,
// that request held too.
func (p *APIServerProxy) PartitionOn(match func(method, path string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on = match
}

// Partitioned is closed when the partition begins; PartitionedAt then says when.
func (p *APIServerProxy) Partitioned() <-chan struct{} { return p.cut }

// PartitionedAt returns when the partition began (zero before).
func (p *APIServerProxy) PartitionedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at
}

// Heal ends the partition: the held requests are forwarded, and new ones pass.
func (p *APIServerProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.heal:
	default:
		p.upAt = time.Now()
		close(p.heal)
	}
}

// HealedAt returns when Heal was first called (zero before).
func (p *APIServerProxy) HealedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upAt
}

// WaitHeldAnswered waits up to timeout for every held request to be over: answered, or, for a
// held watch, its stream ended (at most heldRequestTimeout after the heal).
func (p *APIServerProxy) WaitHeldAnswered(timeout time.Duration) error {
	done := make(chan struct{})
	go func() { p.held.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("held requests still unanswered %s after the heal", timeout)
	}
}

// Requests returns the answered requests, in the order of their answers.
func (p *APIServerProxy) Requests() []APIRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]APIRequest(nil), p.log...)
}

// serve forwards r at once, or, during the partition, holds it until Heal.
func (p *APIServerProxy) serve(w http.ResponseWriter, r *http.Request) {
	rec := &APIRequest{Method: r.Method, Path: r.URL.Path}
	if p.holds(r) {
		rec.Held = true
		defer p.held.Done()
		<-p.heal
		// A held request lands even if its client has given up: it was already on the wire.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), heldRequestTimeout)
		defer cancel()
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, recordKey{}, rec)))
		return
	}
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), recordKey{}, rec))
	defer cancel()
	p.mu.Lock()
	p.open[r] = cancel
	p.mu.Unlock()
	defer func() { p.mu.Lock(); delete(p.open, r); p.mu.Unlock() }()
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// holds reports whether r is to be held, beginning the partition (and cutting the requests
// in flight) if r is the one it was armed for.
func (p *APIServerProxy) holds(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.heal:
		return false
	default:
	}
	if p.at.IsZero() {
		if p.on == nil || !p.on(r.Method, r.URL.Path) {
			return false
		}
		p.at = time.Now()
		close(p.cut)
		for _, cancel := range p.open {
			cancel()
		}
	}
	p.held.Add(1)
	return true
}

// record logs the answer to the request of ctx.
func (p *APIServerProxy) record(ctx context.Context, code int) {
	rec, ok := ctx.Value(recordKey{}).(*APIRequest)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rec.Code, rec.Answered = code, time.Now()
	p.log = append(p.log, *rec)
}
