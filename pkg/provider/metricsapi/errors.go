package metricsapi

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// badRequestErrors are the rules errors caused by what a client sent: the metric label selector,
// the namespace or object names.
var badRequestErrors = []error{
	rules.ErrUnsupportedOperator,
	rules.ErrInvalidLabelName,
	rules.ErrInvalidValue,
	rules.ErrMalformedRequirement,
}

// statusError turns err into an API status a client can act on; what names the request, e.g.
// `metric zdns_vanguard_qps for pods in namespace "ns"`.
//   - a StatusError (404s from the provider helpers) is returned as it is;
//   - a bad metric selector or name (rules sentinels) is a 400 that says what is wrong;
//   - Prometheus unavailable (or an object cache that cannot sync) is a 503 with the cause —
//     never an empty or zero value;
//   - a query Prometheus rejects is a rule bug: a 500 with Prometheus's message;
//   - anything else is a 500.
func statusError(what string, err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	for _, sentinel := range badRequestErrors {
		if errors.Is(err, sentinel) {
			return apierrors.NewBadRequest(fmt.Sprintf("%s: %v", what, err))
		}
	}
	switch {
	case errors.Is(err, prometheus.ErrUnavailable), errors.Is(err, errCacheNotSynced):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("%s: %v", what, err))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apierrors.NewTimeoutError(fmt.Sprintf("%s: %v", what, err), 0)
	}
	return apierrors.NewInternalError(fmt.Errorf("%s: %w", what, err))
}
