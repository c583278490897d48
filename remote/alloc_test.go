package remote

import (
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// SPEC §8: each change a watched host sends is a node built of its
// values; one with no rare fact (no problem, other parent, source field or
// legacy pid) holds no model.Rare and allocates none: under churn most
// changes are such, and a Rare built to be dropped was some 3 % of what a
// change allocated.
func TestPlainNodeAllocatesNoRare(t *testing.T) {
	pid := 42
	tests := []struct {
		name     string
		j        report.NodeJSON
		rare     bool
		maxAlloc float64
	}{
		{"plain node", report.NodeJSON{ID: "a", State: "running"}, false, 1},
		{"a problem", report.NodeJSON{ID: "a", State: "running", Problems: []model.Problem{{Path: "p", Error: "x"}}}, true, 4},
		{"a legacy pid", report.NodeJSON{ID: "a", State: "running", PID: &pid}, true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := builder{}
			if n := b.values(tt.j, nil); (n.Rare != nil) != tt.rare {
				t.Fatalf("rare %v, want %v", n.Rare != nil, tt.rare)
			}
			if got := testing.AllocsPerRun(100, func() { b.values(tt.j, nil) }); got > tt.maxAlloc {
				t.Errorf("%v allocations a node, want at most %v", got, tt.maxAlloc)
			}
		})
	}
}
