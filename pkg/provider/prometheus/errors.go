package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// ErrUnavailable means Prometheus could not answer: the connection or DNS
// lookup failed, the call timed out, Prometheus (or a proxy in front of it)
// answered with HTTP 5xx or 429, or a Thanos Querier could not reach a store
// (storeUnreachable). Servers map it to HTTP 503.
var ErrUnavailable = errors.New("prometheus unavailable")

// ErrPartialAnswer means Prometheus answered with warnings, which mark an answer that may lack
// series (a Thanos store or a remote-read endpoint that failed, a limit hit), and the client
// treats such answers as failed calls. It comes wrapped in ErrUnavailable: a server maps it to
// HTTP 503, and the autoscaler reads it as a failed metric, never as data.
var ErrPartialAnswer = errors.New("prometheus answer may be partial")

// ErrBadQuery means Prometheus rejected the query itself (HTTP 400 bad_data or
// 422 execution, but for a Thanos store that could not be reached, which is
// ErrUnavailable), or answered it with a result of an unusable type.
// Retrying the same query will not help.
var ErrBadQuery = errors.New("prometheus rejected query")

// Outcomes recorded in metrics, one per class of result.
const (
	outcomeSuccess     = "success"
	outcomeBadQuery    = "bad_query"
	outcomeUnavailable = "unavailable"
	outcomeCanceled    = "canceled"
	outcomePartial     = "partial"
	outcomeError       = "error"
)

// maxSubjectLen bounds how much of a query an error message repeats.
const maxSubjectLen = 200

// classify names the outcome of a call and wraps err with the operation, the
// (truncated) query and the matching sentinel.
func classify(op, subject string, err error) (string, error) {
	if err == nil {
		return outcomeSuccess, nil
	}
	subject = truncate(subject)
	switch outcome := outcomeOf(err); outcome {
	case outcomeBadQuery:
		if errors.Is(err, ErrBadQuery) {
			return outcome, fmt.Errorf("%s %q: %w", op, subject, err)
		}
		return outcome, fmt.Errorf("%s %q: %w: %w", op, subject, ErrBadQuery, err)
	case outcomeUnavailable, outcomePartial:
		return outcome, fmt.Errorf("%s %q: %w: %w", op, subject, ErrUnavailable, err)
	default:
		return outcome, fmt.Errorf("%s %q: %w", op, subject, err)
	}
}

// outcomeOf sorts an error from the client_golang API into an outcome.
func outcomeOf(err error) string {
	var (
		apiErr    *v1.Error
		statusErr *statusError
		urlErr    *url.Error
		netErr    net.Error
	)
	switch {
	case errors.Is(err, ErrPartialAnswer):
		return outcomePartial
	case errors.Is(err, ErrBadQuery):
		return outcomeBadQuery
	case errors.Is(err, context.Canceled):
		// The caller went away; Prometheus is not to blame.
		return outcomeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeUnavailable
	case errors.As(err, &statusErr):
		if statusErr.code == http.StatusTooManyRequests || statusErr.code >= 500 {
			return outcomeUnavailable
		}
		return outcomeError
	case errors.As(err, &apiErr):
		if apiErr.Type == v1.ErrExec && storeUnreachable(apiErr.Msg) {
			return outcomeUnavailable
		}
		return apiOutcome(apiErr.Type)
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		// No response at all: refused, reset, DNS, TLS handshake, timeouts.
		return outcomeUnavailable
	}
	return outcomeError
}

// apiOutcome sorts the errorType of a Prometheus API error response.
func apiOutcome(t v1.ErrorType) string {
	switch t {
	case v1.ErrBadData, v1.ErrExec:
		return outcomeBadQuery
	case v1.ErrTimeout, v1.ErrServer:
		return outcomeUnavailable
	case v1.ErrCanceled:
		return outcomeCanceled
	}
	return outcomeError
}

// storeUnreachableMarks are what a Thanos Querier's execution error (HTTP 422) says when a store
// behind it could not be reached and partial responses are off (podpilot sends
// partial_response=false): gRPC's status Unavailable or DeadlineExceeded from a store, or no
// store left to ask. The query is fine; the answer comes back with the store, so such an error
// is the backend being unavailable, not a rejected query.
var storeUnreachableMarks = []string{
	"rpc error: code = Unavailable", "rpc error: code = DeadlineExceeded",
	"No StoreAPIs available", "No StoreAPIs matched",
}

// storeUnreachable reports whether an execution error's message says a store could not answer.
func storeUnreachable(msg string) bool {
	for _, m := range storeUnreachableMarks {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// truncate shortens s to maxSubjectLen bytes, on a rune boundary.
func truncate(s string) string {
	if len(s) <= maxSubjectLen {
		return s
	}
	cut := maxSubjectLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
