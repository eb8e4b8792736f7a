package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// maxDetailLen bounds how much of an unexpected response body an error repeats.
const maxDetailLen = 256

// maxErrorBody bounds how much of an answer that is not a Prometheus API answer is read.
const maxErrorBody = 4 << 10

// transport sends Prometheus API calls through the configured HTTP client (TLS, auth, headers)
// and hands the caller the response body as a stream, which client_golang's v1 API would read
// whole and decode twice. api.Client builds the endpoint URLs, path prefix included.
type transport struct {
	api  api.Client
	http *http.Client
	get  bool
	bufs sync.Pool // *[]byte scanner buffers
}

// setTenant sets req's TenantHeader to tenant, or leaves it unset when tenant is empty.
func setTenant(req *http.Request, tenant string) {
	if tenant != "" {
		req.Header.Set(TenantHeader, tenant)
	}
}

// do sends a call to endpoint ep and returns a response whose body is a Prometheus API answer:
// success, or a Prometheus API error (HTTP 400 or 422). Any other status becomes a
// *statusError. A POST answered with 403, 405 or 501 is sent again as a GET, as client_golang's
// v1 API does.
func (t *transport) do(ctx context.Context, tenant, ep string, args url.Values) (*http.Response, error) {
	u := t.api.URL(ep, nil)
	form := args.Encode()
	if !t.get {
		resp, err := t.send(ctx, tenant, http.MethodPost, u, form)
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented:
			discard(resp)
		default:
			return checkStatus(resp)
		}
	}
	resp, err := t.send(ctx, tenant, http.MethodGet, u, form)
	if err != nil {
		return nil, err
	}
	return checkStatus(resp)
}

// send sends one request: the form in the body of a POST, in the URL of a GET, and the tenant
// (if any) in TenantHeader.
func (t *transport) send(ctx context.Context, tenant, method string, u *url.URL, form string) (*http.Response, error) {
	var body io.Reader
	if method == http.MethodGet {
		get := *u
		get.RawQuery = form
		u = &get
	} else {
		body = strings.NewReader(form)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build %s request for %s: %w", method, u.Path, err)
	}
	setTenant(req, tenant)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header["Idempotency-Key"] = nil // lets the transport retry on a broken connection
	}
	return t.http.Do(req) //nolint:bodyclose // closed by the caller, or by checkStatus/discard
}

// checkStatus passes on a response the caller can decode and turns any other into a
// *statusError, closing its body.
func checkStatus(resp *http.Response) (*http.Response, error) {
	if isAPIStatus(resp.StatusCode) {
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	return nil, &statusError{code: resp.StatusCode, detail: detail(body)}
}

// discard drains (a bounded part of) and closes a body, so that the connection can be reused.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// decode reads the answer of resp with data decoding its "data" value, closes the body and
// returns the envelope (warnings and infos) and the error the answer stands for.
func (t *transport) decode(ctx context.Context, resp *http.Response, data func(*scanner) error) (envelope, error) {
	defer discard(resp)
	bp, _ := t.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	s := newScanner(resp.Body, *bp)
	env, err := readAnswer(s, resp.StatusCode, data)
	if len(s.buf) <= maxPooledBuffer {
		*bp = s.buf
		t.bufs.Put(bp)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return env, fmt.Errorf("%w: %w", ctx.Err(), err)
	case err != nil && errors.Is(err, errSyntax):
		if !isSuccess(resp.StatusCode) {
			return env, &v1.Error{Type: v1.ErrClient, Msg: fmt.Sprintf("client error: %d", resp.StatusCode), Detail: err.Error()}
		}
		return env, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error()}
	}
	return env, err
}

// readAnswer reads a whole answer from s, data reading the value of "data", and returns its
// envelope and the error it stands for: malformed JSON (errSyntax), the reader's error, what
// data rejected, or the API error of an answer that did not succeed (answered with code).
func readAnswer(s *scanner, code int, data func(*scanner) error) (envelope, error) {
	env, err := decodeEnvelope(s, func() error { return data(s) })
	if err != nil {
		return env, err
	}
	return env, env.apiError(code)
}

// maxPooledBuffer is the largest scanner buffer kept for reuse.
const maxPooledBuffer = 1 << 20

func isSuccess(code int) bool { return code/100 == 2 }

// isAPIStatus reports whether the v1 API can read a status itself: success, or
// a Prometheus API error with its JSON body.
func isAPIStatus(code int) bool {
	return code/100 == 2 || code == http.StatusBadRequest || code == http.StatusUnprocessableEntity
}

// statusError is an HTTP answer that is neither success nor a Prometheus API
// error: 5xx, 429, 401, 403, 404 and the like, often from a proxy.
type statusError struct {
	code   int
	detail string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("http status %d %s", e.code, strings.ToLower(http.StatusText(e.code)))
	if e.detail == "" {
		return msg
	}
	return msg + ": " + e.detail
}

// detail extracts the error message of a Prometheus JSON error body, or else
// the start of the body.
func detail(body []byte) string {
	var apiResp struct {
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
	}
	if json.Unmarshal(body, &apiResp) == nil && apiResp.Error != "" {
		if apiResp.ErrorType == "" {
			return apiResp.Error
		}
		return apiResp.ErrorType + ": " + apiResp.Error
	}
	s := strings.TrimSpace(string(body))
	if len(s) > maxDetailLen {
		s = strings.ToValidUTF8(s[:maxDetailLen], "") + "…"
	}
	return s
}
