package ui

import (
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §8: View() with 10,000 nodes ≤ 2 ms. The frame is invalidated every
// iteration (as a tick or an update does), so this is the rebuild, not the
// cached return.
func BenchmarkView10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	m.moveTo(5000)
	b.ReportAllocs()
	for b.Loop() {
		m.dirty = true
		_ = m.View()
	}
}

// SPEC §8: a key press to the next frame ≤ 16 ms: Update with a key that
// moves the cursor, then View.
func BenchmarkKeyToFrame10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	m.moveTo(5000)
	keys := []string{"j", "k"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		press(m, keys[i%2])
		_ = m.View()
		i++
	}
}

// The worst key: one that re-flattens the whole tree (expand all), then View.
func BenchmarkReflowKeyToFrame10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	b.ReportAllocs()
	for b.Loop() {
		press(m, "+")
		_ = m.View()
	}
}

// A new snapshot of 10,000 nodes arriving: summary, flatten, frame.
func BenchmarkUpdateToFrame10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	snap := bigSnapshot(10000)
	b.ReportAllocs()
	for b.Loop() {
		m.Update(updateMsg{update: model.Update{Snapshot: snap}})
		_ = m.View()
	}
}
