package apistatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

func TestFromError(t *testing.T) {
	errNotReady := errors.New("cache not synced")
	tests := []struct {
		name string
		err  error
		want int32
	}{
		{"an API status is kept as it is", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"), http.StatusNotFound},
		{"an unsupported selector operator is the client's fault: 400", fmt.Errorf("x: %w", rules.ErrUnsupportedOperator), http.StatusBadRequest},
		{"an invalid label name is the client's fault: 400", fmt.Errorf("x: %w", rules.ErrInvalidLabelName), http.StatusBadRequest},
		{"Prometheus unavailable is a 503, never a zero", fmt.Errorf("x: %w", prometheus.ErrUnavailable), http.StatusServiceUnavailable},
		{"the caller's not-ready error is a 503", fmt.Errorf("x: %w", errNotReady), http.StatusServiceUnavailable},
		{"a timed-out request is a 504", fmt.Errorf("x: %w", context.DeadlineExceeded), http.StatusGatewayTimeout},
		{"a query Prometheus rejects is a rule bug: 500", fmt.Errorf("x: %w", prometheus.ErrBadQuery), http.StatusInternalServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FromError("metric m for pods", tc.err, errNotReady)
			var status apierrors.APIStatus
			if !errors.As(got, &status) || status.Status().Code != tc.want {
				t.Fatalf("FromError(%v) = %v, want code %d", tc.err, got, tc.want)
			}
		})
	}
}
