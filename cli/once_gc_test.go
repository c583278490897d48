package cli

import (
	"runtime"
	"runtime/debug"
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
	restore := holdCollection()
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
