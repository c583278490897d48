package liveness

import (
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/model"
)

// TestNodesOfOneFlagSetShareItsList: SPEC §8 "100,000 nodes: ≤ 300 MiB
// RSS". A forest's nodes fall into a few sets of flags, and the live
// engine classifies a copy of every node when a fleet crosses a threshold
// together: every node of a set holds the set's one list, which nobody can
// write through (no room to grow: an append copies it). A scan flag the
// classifier does not know still gets a list of its own.
func TestNodesOfOneFlagSetShareItsList(t *testing.T) {
	tests := []struct {
		name  string
		a, b  *model.Node
		want  []model.Flag
		share bool
	}{
		{"running, quiet", beating("a", "running", pidAlive, time.Minute), beating("b", "running", pidAlive, time.Minute),
			[]model.Flag{model.FlagQuiet}, true},
		{"running, stalled, kill candidate", beating("a", "running", pidAlive, 6*time.Minute), beating("b", "running", pidAlive, 7*time.Minute),
			[]model.Flag{model.FlagStalled, model.FlagKillCandidate}, true},
		{"the same set reached from scan flags", beating("a", "running", pidAlive, time.Second, scanFlags(model.FlagConflict)),
			beating("b", "running", pidAlive, 2*time.Second, scanFlags(model.FlagConflict)), []model.Flag{model.FlagConflict}, true},
		{"a scan flag the classifier does not know", beating("a", "running", pidAlive, time.Second, scanFlags("novel")),
			beating("b", "running", pidAlive, time.Second, scanFlags("novel")), []model.Flag{"novel"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ClassifyForest([]*model.Node{tt.a, tt.b}, newFakeProbe(), now, model.DefaultThresholds())
			if !slices.Equal(tt.a.Flags, tt.want) || !slices.Equal(tt.b.Flags, tt.want) {
				t.Fatalf("flags %v and %v, want %v", tt.a.Flags, tt.b.Flags, tt.want)
			}
			if shared := unsafe.SliceData(tt.a.Flags) == unsafe.SliceData(tt.b.Flags); shared != tt.share {
				t.Errorf("the two lists are one: %v, want %v", shared, tt.share)
			}
			if tt.share && cap(tt.a.Flags) != len(tt.a.Flags) {
				t.Errorf("the shared list has room to grow (capacity %d, length %d): an append would write it", cap(tt.a.Flags), len(tt.a.Flags))
			}
		})
	}
}
