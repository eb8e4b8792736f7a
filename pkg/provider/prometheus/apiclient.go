package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/prometheus/client_golang/api"
)

// maxDetailLen bounds how much of an unexpected response body an error repeats.
const maxDetailLen = 256

// statusClient sits between client_golang's v1 API and its HTTP client. It
//   - turns the v1 API's form POSTs into GETs when the method is GET: the v1
//     API always POSTs first and falls back to GET only on 403, 405 or 501;
//   - turns answers that are not Prometheus API errors (anything but 2xx, 400
//     and 422) into a statusError that keeps the HTTP status code, which the v1
//     API would otherwise reduce to "client error"/"server error".
type statusClient struct {
	next api.Client
	get  bool
}

var _ api.Client = (*statusClient)(nil)

// URL implements api.Client.
func (c *statusClient) URL(ep string, args map[string]string) *url.URL {
	return c.next.URL(ep, args)
}

// Do implements api.Client.
func (c *statusClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	if c.get && req.Method == http.MethodPost {
		get, err := formToGET(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		req = get
	}
	resp, body, err := c.next.Do(ctx, req)
	if err != nil || isAPIStatus(resp.StatusCode) {
		return resp, body, err
	}
	serr := &statusError{code: resp.StatusCode, detail: detail(body)}
	if req.Method == http.MethodPost {
		// Hand the response on so that the v1 API can still fall back to GET
		// on 403, 405 or 501; it keeps serr for every other status.
		return resp, nil, serr
	}
	return nil, nil, serr
}

// formToGET moves the form body of a POST into the query string of a GET.
func formToGET(ctx context.Context, req *http.Request) (*http.Request, error) {
	form, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read form of %s request: %w", req.URL.Path, err)
	}
	if err := req.Body.Close(); err != nil {
		return nil, fmt.Errorf("close form of %s request: %w", req.URL.Path, err)
	}
	u := *req.URL
	u.RawQuery = string(form)
	get, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build GET request for %s: %w", req.URL.Path, err)
	}
	return get, nil
}

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
