package hpaconv

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrRefused means an HPA has no exact PodAutoscaler equivalent; errors.Is finds it in every
// *RefusedError.
var ErrRefused = errors.New("no exact PodAutoscaler equivalent")

// Refusal is one field of an HPA that has no exact PodAutoscaler equivalent.
type Refusal struct {
	// Field is the field's path in the HPA, e.g. spec.metrics[2].pods.target.type.
	Field string
	// Value is the field's value as written, empty when the reason is about the field's absence.
	Value string
	// Reason says why the PodAutoscaler cannot express it.
	Reason string
}

// String returns "field: value: reason", or "field: reason" without a value.
func (r Refusal) String() string {
	if r.Value == "" {
		return r.Field + ": " + r.Reason
	}
	return fmt.Sprintf("%s: %s: %s", r.Field, r.Value, r.Reason)
}

// RefusedError lists every refusal of one HPA.
type RefusedError struct {
	// HPA is the HPA's namespace/name.
	HPA string
	// Refusals are its fields without an exact equivalent, in the order of the HPA's spec.
	Refusals []Refusal
}

// Error names the HPA and each refused field.
func (e *RefusedError) Error() string {
	parts := make([]string, 0, len(e.Refusals))
	for _, r := range e.Refusals {
		parts = append(parts, r.String())
	}
	return fmt.Sprintf("HorizontalPodAutoscaler %s: %s: %s", e.HPA, ErrRefused, strings.Join(parts, "; "))
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// refusals collects the refusals of one conversion.
type refusals []Refusal

// add records that the field at p, whose value is v (nil for none), cannot be converted.
func (rs *refusals) add(p *field.Path, v any, format string, args ...any) {
	value := ""
	if v != nil {
		value = fmt.Sprint(v)
	}
	*rs = append(*rs, Refusal{Field: p.String(), Value: value, Reason: fmt.Sprintf(format, args...)})
}
