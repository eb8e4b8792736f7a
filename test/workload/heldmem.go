package main

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// pageSize is the unit memory is handed back to the kernel in; slots are
// whole pages so that giving one back never touches a live neighbour.
const pageSize = 4096

// heldMemory keeps the memory of recent queries: each query writes its own
// slot of a ring, and the slots taken more than window ago are given back
// (release), so the memory the process uses follows the query rate:
// rate × window × slot size, never more than the ring. When the ring is full,
// the oldest eighth is given back early.
//
// The ring lives outside the Go heap (an anonymous mapping, see
// mapHeldMemory) so that what is given back leaves the process's working set
// at once instead of when the Go scavenger gets to it, and the garbage
// collector never scans it.
type heldMemory struct {
	slotSize int
	window   time.Duration
	// release gives b's pages back to the kernel.
	release func(b []byte) error

	mu  sync.Mutex
	mem []byte
	// head and tail count the slots taken and given back so far; the live
	// slots are [tail, head), at index seq % slots in mem.
	head, tail uint64
	// marks cut the live slots into stretches of at most window/10, oldest
	// first; a stretch is given back once its last slot is window old.
	marks []mark
}

// mark starts a stretch: the slots from seq (to the next mark's seq, or
// head) were taken from first to last.
type mark struct {
	first, last time.Time
	seq         uint64
}

// newHeldMemory returns a ring of the slots of slotSize bytes (a multiple of
// pageSize) that fit in mem; slotSize 0 or a mem smaller than one slot
// holds nothing.
func newHeldMemory(mem []byte, slotSize int, window time.Duration, release func([]byte) error) *heldMemory {
	h := &heldMemory{slotSize: slotSize, window: window, release: release}
	if slotSize > 0 && len(mem) >= slotSize {
		h.mem = mem[:len(mem)/slotSize*slotSize]
	}
	return h
}

// mapHeldMemory maps size bytes of anonymous memory (rounded down to whole
// slots) for a heldMemory; the pages count only once they are written.
func mapHeldMemory(size, slotSize int, window time.Duration) (*heldMemory, error) {
	if slotSize == 0 || size < slotSize {
		return newHeldMemory(nil, 0, window, nil), nil
	}
	size = size / slotSize * slotSize
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes for the held memory: %w", size, err)
	}
	release := func(b []byte) error {
		if err := syscall.Madvise(b, syscall.MADV_DONTNEED); err != nil {
			return fmt.Errorf("give back %d bytes of held memory: %w", len(b), err)
		}
		return nil
	}
	return newHeldMemory(mem, slotSize, window, release), nil
}

func (h *heldMemory) slots() uint64 { return uint64(len(h.mem) / h.slotSize) }

// take returns the next slot for a query taken at now, or nil if the ring
// holds nothing. The caller writes it; it stays held for window.
func (h *heldMemory) take(now time.Time) ([]byte, error) {
	if h.mem == nil {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var err error
	if h.head-h.tail == h.slots() {
		err = h.releaseTo(h.tail + max(1, h.slots()/8))
	}
	if n := len(h.marks); n == 0 || now.Sub(h.marks[n-1].first) >= h.window/10 {
		h.marks = append(h.marks, mark{first: now, last: now, seq: h.head})
	} else {
		h.marks[n-1].last = now
	}
	i := int(h.head % h.slots())
	h.head++
	return h.mem[i*h.slotSize : (i+1)*h.slotSize], err
}

// expire gives back every slot taken before now-window.
func (h *heldMemory) expire(now time.Time) error {
	if h.mem == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cutoff := now.Add(-h.window)
	var err error
	// releaseTo drops marks[0] once its stretch is given back.
	for len(h.marks) > 0 && !h.marks[0].last.After(cutoff) {
		err = errors.Join(err, h.releaseTo(h.stretchEnd(0)))
	}
	return err
}

// stretchEnd is the seq after the last slot of marks[i]'s stretch.
func (h *heldMemory) stretchEnd(i int) uint64 {
	if i+1 < len(h.marks) {
		return h.marks[i+1].seq
	}
	return h.head
}

// releaseTo gives back the live slots before seq (at most two ranges of mem,
// as the ring may wrap) and drops the marks whose stretch is all given back. The slots count as given back even if the kernel refused: they
// are written over when the ring comes round, so the ring never holds more
// than mem.
func (h *heldMemory) releaseTo(seq uint64) error {
	seq = min(seq, h.head)
	var err error
	if seq > h.tail {
		from, n := h.tail%h.slots(), seq-h.tail
		if end := from + n; end > h.slots() {
			err = errors.Join(h.releaseSlots(from, h.slots()-from), h.releaseSlots(0, end-h.slots()))
		} else {
			err = h.releaseSlots(from, n)
		}
		h.tail = seq
	}
	for len(h.marks) > 0 && h.stretchEnd(0) <= h.tail {
		h.marks = h.marks[1:]
	}
	return err
}

func (h *heldMemory) releaseSlots(from, n uint64) error {
	size := uint64(h.slotSize)
	return h.release(h.mem[from*size : (from+n)*size])
}

// held is the number of bytes in live slots.
func (h *heldMemory) held() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(h.head-h.tail) * int64(h.slotSize)
}
