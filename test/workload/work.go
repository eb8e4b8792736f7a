package main

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// hashBlock is the size of the fixed input a query hashes over and over.
const hashBlock = 16 << 10

// hashWork is the cpu a query spends: SHA-256 over bytes bytes of a fixed
// block, seeded with the query's sequence number.
type hashWork struct {
	block []byte
	bytes int
}

func newHashWork(bytes int) hashWork {
	block := make([]byte, hashBlock)
	for i := range block {
		block[i] = byte(i*7 + i>>8)
	}
	return hashWork{block: block, bytes: bytes}
}

// do hashes w.bytes bytes for query seq and writes the digest across held
// (the query's slot of held memory, or nil), so that its pages are really
// used; it returns the digest.
func (w hashWork) do(seq uint64, held []byte) [sha256.Size]byte {
	h := sha256.New()
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seq)
	h.Write(s[:])
	for left := w.bytes; left > 0; left -= hashBlock {
		h.Write(w.block[:min(left, hashBlock)])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	for i := 0; i < len(held); i += len(sum) {
		copy(held[i:], sum[:])
	}
	return sum
}

// calibrationCPU is how much thread cpu time calibrate spends measuring.
const calibrationCPU = 200 * time.Millisecond

// errNoThreadCPU means the thread's cpu time could not be read (Linux only).
var errNoThreadCPU = errors.New("cannot read the thread's cpu time")

// calibrate measures how many bytes this machine hashes in perQuery of cpu
// time: it hashes on one locked OS thread and reads that thread's cpu time,
// so other processes competing for the cores do not skew it. It costs about
// calibrationCPU of cpu at start-up.
func calibrate(perQuery time.Duration) (int, error) {
	if perQuery <= 0 {
		return 0, nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := newHashWork(1 << 20)
	start, err := threadCPU()
	if err != nil {
		return 0, err
	}
	var hashed int64
	var spent time.Duration
	for seq := uint64(0); spent < calibrationCPU; seq++ {
		w.do(seq, nil)
		hashed += int64(w.bytes)
		now, err := threadCPU()
		if err != nil {
			return 0, err
		}
		spent = now - start
	}
	return int(float64(hashed) * perQuery.Seconds() / spent.Seconds()), nil
}

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU returns the user and system cpu time of the calling OS thread.
func threadCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, fmt.Errorf("%w: %w", errNoThreadCPU, err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
