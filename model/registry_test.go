package model

import (
	"slices"
	"testing"
	"time"
)

// A node's registry is never written where a copy of the node holds it too
// (a published snapshot may share it): SetRegistry gives the node a new
// one, an append to its lines copies them, and all three facts zero leave
// it none.
func TestSetRegistryLeavesCopiesAlone(t *testing.T) {
	mtime := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	line := func(n int32) RegistryLine { return RegistryLine{Number: n} }
	roomy := append(make([]RegistryLine, 0, 8), line(1))
	tests := []struct {
		name      string
		lines     []RegistryLine
		mtime     time.Time
		size      int64
		wantNil   bool
		wantLines int
	}{
		{"lines read", []RegistryLine{line(1), line(2)}, mtime, 40, false, 2},
		{"an empty file", nil, mtime, 0, false, 0},
		{"lines with room to grow", roomy, mtime, 20, false, 1},
		{"nothing read", nil, time.Time{}, 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			published := &Node{ID: "a"}
			published.SetRegistry([]RegistryLine{line(9)}, mtime.Add(-time.Hour), 10)
			was := published.Registry
			copied := *published
			copied.SetRegistry(tt.lines, tt.mtime, tt.size)
			if published.Registry != was || published.RegistrySize() != 10 || len(published.RegistryLines()) != 1 {
				t.Errorf("the published node's registry was written: %+v", published.Registry)
			}
			if (copied.Registry == nil) != tt.wantNil {
				t.Fatalf("registry %+v, want nil %v", copied.Registry, tt.wantNil)
			}
			if got := copied.RegistryLines(); len(got) != tt.wantLines || cap(got) != len(got) {
				t.Errorf("lines %v (cap %d), want %d with no room to grow", got, cap(got), tt.wantLines)
			}
			if copied.RegistryMtime() != tt.mtime || copied.RegistrySize() != tt.size {
				t.Errorf("mtime %v size %d, want %v %d", copied.RegistryMtime(), copied.RegistrySize(), tt.mtime, tt.size)
			}
			numbers := func() []int32 {
				var out []int32
				for _, l := range roomy[:cap(roomy)] {
					out = append(out, l.Number)
				}
				return out
			}
			before := numbers()
			_ = append(copied.RegistryLines(), line(3))
			if !slices.Equal(numbers(), before) {
				t.Errorf("an append to the lines wrote the array they were read into")
			}
		})
	}
}
