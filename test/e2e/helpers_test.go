package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

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

// rejection is a document admission must reject, and the field its rejection must name.
type rejection struct {
	name, doc, field string
}

// expectRejected applies each document of cases in ns as a subtest and fails it unless the API
// server rejects the document naming the case's field.
func expectRejected(ctx context.Context, t *testing.T, ns string, cases []rejection) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cluster.ApplyErr(ctx, ns, []byte(tc.doc), false)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.doc)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("rejection does not name %s: %v", tc.field, err)
			}
		})
	}
}
