package memstat

import (
	"runtime/metrics"
	"sync"
	"time"
)

// HeapPeak samples the Go heap while a benchmark runs: the bytes its
// objects occupy (live, and dead ones not yet swept: what the heap holds
// between two collections), and the live heap the last collection marked.
// The runtime keeps no high-water mark of its own, so a sampler reads
// runtime/metrics (no stop of the world) every interval; a peak between
// two samples may be missed by up to what the program allocates in one.
type HeapPeak struct {
	stop chan struct{}
	done sync.WaitGroup

	mu         sync.Mutex
	heap, live uint64
}

// StartHeapPeak starts sampling every interval (10 ms where 0).
func StartHeapPeak(interval time.Duration) *HeapPeak {
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	h := &HeapPeak{stop: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() {
		metrics.Read(samples)
		h.mu.Lock()
		defer h.mu.Unlock()
		if s := samples[0].Value; s.Kind() == metrics.KindUint64 {
			h.heap = max(h.heap, s.Uint64())
		}
		if s := samples[1].Value; s.Kind() == metrics.KindUint64 {
			h.live = max(h.live, s.Uint64())
		}
	}
	read()
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return h
}

// Peaks are the peaks so far, MiB: the heap's objects and the live heap.
func (h *HeapPeak) Peaks() (heapMiB, liveMiB float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return float64(h.heap) / (1 << 20), float64(h.live) / (1 << 20)
}

// Stop ends the sampling and returns the peaks (Peaks).
func (h *HeapPeak) Stop() (heapMiB, liveMiB float64) {
	close(h.stop)
	h.done.Wait()
	return h.Peaks()
}
