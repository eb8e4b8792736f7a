package resourcemetrics

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// errNoResourceRules means the rules in force have no resourceRules (a reload removed them).
var errNoResourceRules = errors.New("the rule file in force has no resourceRules")

// statusError turns err into an API status; what names the request, e.g.
// `metrics of pod ns/p1`:
//   - an object name that cannot be put in a query is a 400;
//   - Prometheus unavailable, or no resource rules in force, is a 503 with the cause — never an
//     empty or zero usage;
//   - a cancelled or timed-out request is a 504;
//   - anything else (a query Prometheus rejects is a rule bug) is a 500.
func statusError(what string, err error) error {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		return err
	case errors.Is(err, rules.ErrInvalidValue), errors.Is(err, rules.ErrInvalidLabelName):
		return apierrors.NewBadRequest(fmt.Sprintf("%s: %v", what, err))
	case errors.Is(err, prometheus.ErrUnavailable), errors.Is(err, errNoResourceRules):
		return apierrors.NewServiceUnavailable(fmt.Sprintf("%s: %v", what, err))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return apierrors.NewTimeoutError(fmt.Sprintf("%s: %v", what, err), 0)
	}
	return apierrors.NewInternalError(fmt.Errorf("%s: %w", what, err))
}
