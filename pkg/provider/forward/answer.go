package forward

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/external_metrics"
	externalv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
)

// errBadAnswer means the other adapter answered 200 with a body that is no metric value list.
var errBadAnswer = errors.New("undecodable answer of the other external metrics adapter")

// decodeValues returns the metric values of a 200 answer, or the other adapter's error as it
// gave it: its Status (code, reason, message) when the body is one, else its status code with
// the body as the message.
func decodeValues(a answer) (*external_metrics.ExternalMetricValueList, error) {
	if a.code != http.StatusOK {
		return nil, statusError(a)
	}
	var v externalv1beta1.ExternalMetricValueList
	if err := json.Unmarshal(a.body, &v); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadAnswer, err)
	}
	out := &external_metrics.ExternalMetricValueList{}
	if err := externalv1beta1.Convert_v1beta1_ExternalMetricValueList_To_external_metrics_ExternalMetricValueList(&v, out, nil); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadAnswer, err)
	}
	return out, nil
}

// statusError is the other adapter's non-200 answer as an API error with its status code.
func statusError(a answer) *apierrors.StatusError {
	var s metav1.Status
	if err := json.Unmarshal(a.body, &s); err == nil && s.Kind == "Status" {
		s.Code = int32(a.code) // the code it answered with is the one returned
		return &apierrors.StatusError{ErrStatus: s}
	}
	msg := strings.TrimSpace(string(a.body))
	if msg == "" {
		msg = http.StatusText(a.code)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: int32(a.code), Reason: metav1.StatusReasonUnknown, Message: msg,
	}}
}
