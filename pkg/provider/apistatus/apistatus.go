package apistatus

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// badRequest are the rules errors caused by what a client sent: a metric
// label selector, a namespace or object names, or a selection whose query
// would be too large.
var badRequest = []error{
	rules.ErrUnsupportedOperator,
	rules.ErrInvalidLabelName,
	rules.ErrInvalidValue,
	rules.ErrMalformedRequirement,
	rules.ErrQueryTooLarge,
}

// FromError turns err into an API status; what names the request, e.g.
// `metric zdns_vanguard_qps for pods in namespace "ns"`.
//   - an API status (e.g. a 404 from custom-metrics-apiserver's helpers) is returned as it is;
//   - a bad selector, namespace or object name, or a query over the size limit, is a 400 that
//     says what is wrong;
//   - Prometheus unavailable, or any of unavailable (the caller's own "not ready" errors), is a
//     503 with the cause: never an empty or zero value;
//   - a cancelled or timed-out request is a 504;
//   - anything else, such as a query Prometheus rejects (a rule bug), is a 500 with the cause.
func FromError(what string, err error, unavailable ...error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	for _, sentinel := range badRequest {
		if errors.Is(err, sentinel) {
			return apierrors.NewBadRequest(fmt.Sprintf("%s: %v", what, err))
		}
	}
	if errors.Is(err, prometheus.ErrUnavailable) {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("%s: %v", what, err))
	}
	for _, sentinel := range unavailable {
		if errors.Is(err, sentinel) {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("%s: %v", what, err))
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return apierrors.NewTimeoutError(fmt.Sprintf("%s: %v", what, err), 0)
	}
	return apierrors.NewInternalError(fmt.Errorf("%s: %w", what, err))
}
