package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// onceHeapBeforeCollecting is how large a one-shot run's heap grows
// before its first garbage collection.
const onceHeapBeforeCollecting = 64 << 20

// onceLargeHeap is the live heap past which a one-shot run collects at
// onceLargeHeapPercent: a store of a million rows lives in 1.3 GB, and at
// the default pacing its heap grew a third past that before the run ended,
// beyond SPEC §8's 2 KiB a node (200,000 rows, 260 MB live, likewise).
// Below it (100,000 nodes of the file protocol live in some 150 MB) the
// default pacing holds.
const (
	onceLargeHeap        = 256 << 20
	onceLargeHeapPercent = 50
)

// HoldOnceCollection paces the collector as a one-shot run does
// (holdCollection), for what measures one in a process of its own: a
// benchmark of `--once` run in process, from a collected heap as a
// process starts with.
func HoldOnceCollection() (restore func()) { return holdCollection(onceLargeHeap) }

// holdCollection holds the garbage collector off while a one-shot run's
// heap is small. `--once` over 10,000 nodes allocates some 35 MB in a third
// of a second and keeps half of it to the end; the collections the default
// pacing makes on the way up (at 4, 8, 16 and 32 MB) were a third of its
// CPU outside the kernel, and freed little. Once the heap reaches
// onceHeapBeforeCollecting the first collection runs, and from there the
// default pacing holds, so 100,000 nodes stay within SPEC §8's memory;
// once a collection finds more than largeHeap live (onceLargeHeap), the
// collector runs at onceLargeHeapPercent for the rest of the run. GOGC or
// GOMEMLIMIT in the environment win. The func returned puts the settings
// back (a run in a test's process).
func holdCollection(largeHeap uint64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(onceHeapBeforeCollecting)
	var mu sync.Mutex
	ended := false
	set := func(gcPercent int) {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			debug.SetGCPercent(gcPercent)
			debug.SetMemoryLimit(limit)
		}
	}
	restore = func() {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
			ended = true
		}
	}
	// The first collection (the limit reached) hands back to the default
	// pacing: a heap past the limit must not be collected over and over.
	// Each collection after it looks at the live heap, until it is large.
	var afterCollection func(first bool)
	afterCollection = func(first bool) {
		if first {
			set(percent)
		}
		if liveHeap() >= largeHeap {
			set(min(percent, onceLargeHeapPercent))
			return
		}
		mu.Lock()
		done := ended
		mu.Unlock()
		if !done {
			sentinel := new(collectionSentinel)
			runtime.AddCleanup(sentinel, afterCollection, false)
		}
	}
	sentinel := new(collectionSentinel)
	runtime.AddCleanup(sentinel, afterCollection, true)
	return restore
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// collectionSentinel is unreachable from the start: its cleanup runs after
// the next collection. It holds a pointer, so that it is not batched with
// other tiny objects, whose cleanups may never run.
type collectionSentinel struct{ _ *byte }
