package e2e

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// statusCode is the HTTP status an API error carries, or 0.
func statusCode(err error) int {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return int(se.Status().Code)
	}
	return 0
}

// quantity parses a Kubernetes quantity as a float, NaN if it can't.
func quantity(s string) float64 {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return -1
	}
	return q.AsApproximateFloat64()
}

func stringsContains(s, sub string) bool { return strings.Contains(s, sub) }
