package main

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

func TestHashWorkWritesItsDigestAcrossTheHeldSlot(t *testing.T) {
	w := newHashWork(3*hashBlock + 100)
	held := make([]byte, pageSize)
	sum := w.do(7, held)
	if sum == w.do(8, nil) {
		t.Errorf("queries 7 and 8 have the same digest; the sequence number must seed the hash")
	}
	if sum != w.do(7, nil) {
		t.Errorf("query 7 hashed twice gave two digests")
	}
	for i := 0; i < len(held); i += len(sum) {
		if !bytes.Equal(held[i:i+len(sum)], sum[:]) {
			t.Fatalf("held[%d:] = %x, want the digest %x repeated", i, held[i:i+len(sum)], sum)
		}
	}
}

// TestCalibrate prints what the start-up calibration measures on this
// machine; it asserts only that the work grows with the cpu asked for.
func TestCalibrate(t *testing.T) {
	none, err := calibrate(0)
	if err != nil || none != 0 {
		t.Fatalf("calibrate(0) = %d, %v; want 0 bytes", none, err)
	}
	small, err := calibrate(10 * time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	large, err := calibrate(100 * time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration on this machine: 10µs of cpu hashes %d bytes (%.0f MB/s); 100µs hashes %d bytes", small, float64(small)/10, large)
	if small <= 0 || large <= small {
		t.Errorf("calibrate(10µs) = %d bytes, calibrate(100µs) = %d bytes; want 0 < the first < the second", small, large)
	}
}

// BenchmarkQuery is the cpu of one query as the workload's defaults make it:
// hashing for --cpu-per-query (calibrated) and writing one 4Ki page of held
// memory that is given back a window later. HTTP is not included: the
// host-level test (TestWorkloadFollowsTheLoad) measures the whole. It
// reports cpu-ns/op (the process's cpu time per query) beside ns/op, which
// is wall time and grows with whatever else shares the cores.
func BenchmarkQuery(b *testing.B) {
	hashBytes, err := calibrate(10 * time.Microsecond)
	if err != nil {
		b.Fatal(err)
	}
	w := newHashWork(hashBytes)
	h, err := mapHeldMemory(64<<20, pageSize, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(0, 0)
	cpu0 := processCPU(b)
	b.ResetTimer()
	for i := range b.N {
		if i%1000 == 0 {
			now = now.Add(100 * time.Millisecond)
			if err := h.expire(now); err != nil {
				b.Fatal(err)
			}
		}
		slot, err := h.take(now)
		if err != nil {
			b.Fatal(err)
		}
		w.do(uint64(i), slot)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system cpu time of this process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
