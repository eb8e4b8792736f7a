package prometheus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/podpilot/podpilot/pkg/flight"
)

func TestEachQueryAnswersInOrderOrFailsWhole(t *testing.T) {
	queries := make([]string, 20)
	for i := range queries {
		queries[i] = fmt.Sprintf("q%02d", i)
	}
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		queries []string
		fail    string
		wantErr bool
	}{
		{name: "one query is answered", queries: queries[:1]},
		{name: "many queries are answered in their order", queries: queries},
		{name: "one query failing fails the whole answer", queries: queries, fail: "q13", wantErr: true},
		{name: "the only query failing fails the answer", queries: queries[:1], fail: "q00", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			inFlight, most := 0, 0
			got, err := EachQuery(t.Context(), tt.queries, func(_ context.Context, q string) (string, error) {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				defer func() {
					mu.Lock()
					inFlight--
					mu.Unlock()
				}()
				if q == tt.fail {
					return "", errBoom
				}
				return "answer " + q, nil
			})
			if tt.wantErr {
				if !errors.Is(err, errBoom) || got != nil {
					t.Fatalf("EachQuery = %d answers, %v; want no answer and the error", len(got), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(tt.queries))
			for i, q := range tt.queries {
				want[i] = "answer " + q
			}
			if !slices.Equal(got, want) {
				t.Errorf("answers %q, want %q", got, want)
			}
			if most > MaxConcurrentChunks {
				t.Errorf("%d queries ran at once, want at most %d", most, MaxConcurrentChunks)
			}
		})
	}
}

func TestAPanicInOneQueryIsTheAnswersErrorNotTheProcesssEnd(t *testing.T) {
	for _, queries := range [][]string{{"q0"}, {"q0", "q1", "q2"}} {
		_, err := EachQuery(t.Context(), queries, func(_ context.Context, q string) (int, error) {
			if q == "q0" {
				panic("injected")
			}
			return 1, nil
		})
		if !errors.Is(err, flight.ErrPanicked) {
			t.Errorf("%d queries, the first panicking: err = %v, want %v", len(queries), err, flight.ErrPanicked)
		}
	}
}
