package forward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// maxAnswerBytes bounds an answer read from the other adapter.
const maxAnswerBytes = 16 << 20

// errNoClusterIP means the other adapter's Service has no cluster IP to connect to.
var errNoClusterIP = errors.New("service has no cluster IP")

// target is the other adapter: where it is and the client that reaches it with podpilot's own
// identity over TLS verified with the configured CA.
type target struct {
	client *http.Client
	base   func(ctx context.Context) (string, error)
	name   string
}

// newTarget builds the client from podpilot's own REST config: its credentials (bearer token,
// token file, client certificate or exec plugin) are kept, its server and CA are replaced by the
// other adapter's.
func newTarget(o Options, own *rest.Config, services corev1client.ServicesGetter) (*target, error) {
	c := rest.CopyConfig(own)
	c.TLSClientConfig = rest.TLSClientConfig{
		CAFile:   o.CAFile,
		CertFile: own.CertFile, KeyFile: own.KeyFile, CertData: own.CertData, KeyData: own.KeyData,
	}
	c.Timeout = 0 // each request has its own context deadline
	t := &target{name: o.URL}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil {
			return nil, fmt.Errorf("external metrics forward url %q: %w", o.URL, err)
		}
		c.Host = o.URL
		base := u.Scheme + "://" + u.Host
		t.base = func(context.Context) (string, error) { return base, nil }
	} else {
		svc, err := ParseService(o.Service)
		if err != nil {
			return nil, err
		}
		c.TLSClientConfig.ServerName = svc.ServerName()
		c.Host = "https://" + svc.ServerName()
		t.name = o.Service
		t.base = clusterIPResolver(svc, services)
	}
	client, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("external metrics forward client for %s: %w", t.name, err)
	}
	t.client = client
	return t, nil
}

// clusterIPResolver returns the https base URL of svc's cluster IP and port, as the aggregator
// connects to an APIService's Service. A Service's cluster IP never changes, so the first
// successful lookup is kept; a failed one is retried on the next request.
func clusterIPResolver(svc Service, services corev1client.ServicesGetter) func(ctx context.Context) (string, error) {
	var (
		mu   sync.Mutex
		base string
	)
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if base != "" {
			return base, nil
		}
		s, err := services.Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("get service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		ip := s.Spec.ClusterIP
		if ip == "" || ip == "None" {
			return "", fmt.Errorf("service %s/%s: %w", svc.Namespace, svc.Name, errNoClusterIP)
		}
		base = "https://" + net.JoinHostPort(ip, strconv.Itoa(int(svc.Port)))
		return base, nil
	}
}

// answer is one answer of the other adapter.
type answer struct {
	code int
	body []byte
}

// get sends GET path?query to the other adapter and reads its answer, whatever its status.
func (t *target) get(ctx context.Context, path string, query url.Values) (answer, error) {
	base, err := t.base(ctx)
	if err != nil {
		return answer{}, err
	}
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, fmt.Errorf("request %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("forward to %s: %w", t.name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return answer{}, fmt.Errorf("read answer of %s: %w", t.name, err)
	}
	if len(body) > maxAnswerBytes {
		return answer{}, fmt.Errorf("answer of %s: %w", t.name, errAnswerTooLarge)
	}
	return answer{code: resp.StatusCode, body: body}, nil
}

// errAnswerTooLarge means the other adapter answered with more than maxAnswerBytes.
var errAnswerTooLarge = fmt.Errorf("answer larger than %d bytes", maxAnswerBytes)
