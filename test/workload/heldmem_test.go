package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ring is a heldMemory over a plain slice of slots pages that records the
// slot ranges it gives back.
type ring struct {
	*heldMemory
	base     []byte
	released [][2]int // first slot, slot count
}

func newRing(slots int, window time.Duration) *ring {
	r := &ring{base: make([]byte, slots*pageSize)}
	r.heldMemory = newHeldMemory(r.base, pageSize, window, func(b []byte) error {
		first := (cap(r.base) - cap(b)) / pageSize
		r.released = append(r.released, [2]int{first, len(b) / pageSize})
		return nil
	})
	return r
}

// takeAt takes n slots at t, writing each.
func (r *ring) takeAt(t *testing.T, at time.Time, n int) {
	t.Helper()
	for range n {
		b, err := r.take(at)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != pageSize {
			t.Fatalf("take() returned %d bytes, want one slot of %d", len(b), pageSize)
		}
		b[0] = 1
	}
}

func TestHeldMemoryFollowsTheRecentRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tests := []struct {
		name         string
		do           func(t *testing.T, r *ring)
		wantHeld     int64
		wantReleased [][2]int
	}{
		{
			name:     "what was taken within the window stays held",
			do:       func(t *testing.T, r *ring) { r.takeAt(t, at(0), 3); _ = r.expire(at(9 * time.Second)) },
			wantHeld: 3 * pageSize,
		},
		{
			name:         "what was taken a window ago is given back",
			do:           func(t *testing.T, r *ring) { r.takeAt(t, at(0), 3); _ = r.expire(at(10 * time.Second)) },
			wantReleased: [][2]int{{0, 3}},
		},
		{
			name: "only the stretches older than the window are given back",
			do: func(t *testing.T, r *ring) {
				r.takeAt(t, at(0), 2)
				r.takeAt(t, at(3*time.Second), 4)
				r.takeAt(t, at(6*time.Second), 1)
				_ = r.expire(at(12 * time.Second))
			},
			wantHeld:     5 * pageSize,
			wantReleased: [][2]int{{0, 2}},
		},
		{
			name: "a full ring gives back its oldest eighth early, and the ring wraps",
			do: func(t *testing.T, r *ring) {
				r.takeAt(t, at(0), 16)
				r.takeAt(t, at(time.Second), 1)
			},
			wantHeld:     15 * pageSize,
			wantReleased: [][2]int{{0, 2}},
		},
		{
			name: "giving back a stretch across the wrap gives back both ends",
			do: func(t *testing.T, r *ring) {
				r.takeAt(t, at(0), 12)
				_ = r.expire(at(10 * time.Second))
				r.takeAt(t, at(11*time.Second), 8) // slots 12–15 and 0–3
				_ = r.expire(at(21 * time.Second))
			},
			wantReleased: [][2]int{{0, 12}, {12, 4}, {0, 4}},
		},
		{
			name: "an early give-back does not give back the same slots again",
			do: func(t *testing.T, r *ring) {
				r.takeAt(t, at(0), 16)
				r.takeAt(t, at(5*time.Second), 1) // full: slots 0–1 go early
				_ = r.expire(at(10 * time.Second))
			},
			wantHeld:     1 * pageSize,
			wantReleased: [][2]int{{0, 2}, {2, 14}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(16, 10*time.Second)
			tt.do(t, r)
			if got := r.held(); got != tt.wantHeld {
				t.Errorf("held() = %d, want %d", got, tt.wantHeld)
			}
			if diff := cmp.Diff(tt.wantReleased, r.released); diff != "" {
				t.Errorf("given back (first slot, count) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeldMemoryOfNothingHoldsNothing(t *testing.T) {
	for _, h := range []*heldMemory{
		newHeldMemory(make([]byte, 16*pageSize), 0, time.Second, nil),
		newHeldMemory(make([]byte, pageSize/2), pageSize, time.Second, nil),
	} {
		b, err := h.take(time.Unix(0, 0))
		if b != nil || err != nil || h.held() != 0 || h.expire(time.Unix(100, 0)) != nil {
			t.Errorf("take() = %d bytes, %v; held() = %d; want nothing held", len(b), err, h.held())
		}
	}
}

func TestMappedHeldMemoryGivesPagesBack(t *testing.T) {
	h, err := mapHeldMemory(64*pageSize, 2*pageSize, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	for range 32 {
		b, err := h.take(now)
		if err != nil {
			t.Fatal(err)
		}
		b[0], b[len(b)-1] = 1, 1
	}
	if err := h.expire(now.Add(time.Second)); err != nil {
		t.Fatalf("expire() on a mapping: %v", err)
	}
	if got := h.held(); got != 0 {
		t.Errorf("held() = %d after the window, want 0", got)
	}
	if h.mem[0] != 0 {
		t.Errorf("a given-back page still holds its data; MADV_DONTNEED should have zeroed it")
	}
}
