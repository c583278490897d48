package ui

import (
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §8: View() with 10,000 nodes ≤ 2 ms. The frame and every row on it
// are invalidated every iteration (as a new theme does), so this is the
// frame drawn from scratch, not the cached return nor the reuse of rows.
func BenchmarkView10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	m.moveTo(5000)
	b.ReportAllocs()
	for b.Loop() {
		m.frame.dirty = true
		m.frame.rowEpoch++
		_ = m.View()
	}
}

// SPEC §8 idle CPU: the 1 s tick of a screen of young nodes, whose ages
// (BEAT and the reasons') all move every second; 120×40, 10,000 nodes.
func BenchmarkTick10k(b *testing.B) {
	clock := &steppedClock{now: clock12}
	m := New(Options{Initial: movingReasons(bigSnapshot(10000)), Now: clock.Now, Tick: -1})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.moveTo(5000)
	_ = m.View()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Within a minute of the snapshot, so every age cell moves.
		i++
		clock.now = clock12.Add(time.Duration(1+i%30) * time.Second)
		m.Update(tickMsg(clock.now))
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

// A new snapshot of 10,000 nodes arriving: summary, flatten, frame. Two
// forests that share no node alternate, so each update is laid out and
// counted whole (a stream's updates share what they did not renew:
// BenchmarkTouchUpdate10k).
func BenchmarkUpdateToFrame10k(b *testing.B) {
	m := newTestModel(b, 120, 40, Options{Initial: bigSnapshot(10000)})
	snaps := [2]*model.Snapshot{bigSnapshot(10000), bigSnapshot(10000)}
	alternateUpdates(b, m, snaps)
}

// A fleet's transition arriving at 10,000 nodes: every session but the
// first renewed (the first is shared), then the frame. Two such snapshots
// alternate.
func BenchmarkFleetTransitionUpdate10k(b *testing.B) {
	base := bigSnapshot(10000)
	m := newTestModel(b, 120, 40, Options{Initial: base})
	var snaps [2]*model.Snapshot
	for k := range snaps {
		next := *base
		next.Sessions = slices.Clone(base.Sessions)
		for i := 1; i < len(next.Sessions); i++ {
			next.Sessions[i] = copySubtree(next.Sessions[i], nil)
		}
		next.ByID = indexForest(next.Sessions)
		snaps[k] = &next
	}
	alternateUpdates(b, m, snaps)
}

// alternateUpdates measures an update and its frame, the two snapshots
// arriving in turn.
func alternateUpdates(b *testing.B, m *Model, snaps [2]*model.Snapshot) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Update(updateMsg{update: model.Update{Snapshot: snaps[i%2]}})
		_ = m.View()
		i++
	}
}
