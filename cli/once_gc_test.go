package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// A one-shot run's hold on the collector ends at the first collection:
// from there the default pacing holds, so a heap past the limit is not
// collected over and over.
func TestHoldCollectionEndsAtTheFirstCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	restore := holdCollection(onceLargeHeap)
	defer restore()
	if got := debug.SetMemoryLimit(-1); got != onceHeapBeforeCollecting {
		t.Fatalf("memory limit %d while held, want %d", got, onceHeapBeforeCollecting)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second) // a hang guard: the cleanup runs soon after
	for debug.SetMemoryLimit(-1) != before {
		if time.Now().After(deadline) {
			t.Fatalf("memory limit still %d after a collection, want %d back", debug.SetMemoryLimit(-1), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// gcPercent is the collector's GOGC now.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Past a large live heap a one-shot run collects at onceLargeHeapPercent,
// so that a million rows' heap does not double past what lives; the
// settings come back at the end of the run.
func TestOnceCollectsOftenerPastALargeHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := gcPercent()
	// Large is past what the test process holds live already (the other
	// tests of the package leave some), so that a small heap is small.
	runtime.GC()
	const margin = 16 << 20
	large := liveHeap() + margin
	restore := holdCollection(large)
	defer restore()
	runtime.GC()                                // the first: the default pacing
	deadline := time.Now().Add(5 * time.Second) // a hang guard: the cleanup runs soon after
	for gcPercent() != before {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after a collection of a small heap, want %d", gcPercent(), before)
		}
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := gcPercent(); got != before {
		t.Errorf("GOGC %d after another collection of a small heap, want %d", got, before)
	}
	live := make([]byte, 2*margin)
	for i := range live {
		live[i] = 1
	}
	for gcPercent() != onceLargeHeapPercent {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d with %d bytes live, want %d", gcPercent(), len(live), onceLargeHeapPercent)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(live)
	restore()
	if got := gcPercent(); got != before {
		t.Errorf("GOGC %d after the run, want %d back", got, before)
	}
}
