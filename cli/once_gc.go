package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// onceHeapBeforeCollecting is how large a one-shot run's heap grows
// before its first garbage collection.
const onceHeapBeforeCollecting = 64 << 20

// holdCollection holds the garbage collector off while a one-shot run's
// heap is small. `--once` over 10,000 nodes allocates some 35 MB in a third
// of a second and keeps half of it to the end; the collections the default
// pacing makes on the way up (at 4, 8, 16 and 32 MB) were a third of its
// CPU outside the kernel, and freed little. Once the heap reaches
// onceHeapBeforeCollecting the first collection runs, and from there the
// default pacing holds, so 100,000 nodes stay within SPEC §8's memory.
// GOGC or GOMEMLIMIT in the environment win. The func returned puts the
// settings back (a run in a test's process).
func holdCollection() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(onceHeapBeforeCollecting)
	var once sync.Once
	restore = func() {
		once.Do(func() {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
		})
	}
	// The first collection (the limit reached) hands back to the default
	// pacing: a heap past the limit must not be collected over and over.
	sentinel := new(collectionSentinel)
	runtime.AddCleanup(sentinel, func(restore func()) { restore() }, restore)
	return restore
}

// collectionSentinel is unreachable from the start: its cleanup runs after
// the first collection. It holds a pointer, so that it is not batched with
// other tiny objects, whose cleanups may never run.
type collectionSentinel struct{ _ *byte }
