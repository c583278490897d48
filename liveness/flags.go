package liveness

import (
	"math/bits"
	"slices"

	"github.com/dispatchtop/dispatchtop/model"
)

// flagSet collects a node's flags as bits of their index in model.Flags, so
// that the list comes out deduplicated and in display order whatever order
// the rules added them in.
type flagSet uint32

func (s *flagSet) add(f model.Flag) {
	if i := slices.Index(model.Flags, f); i >= 0 {
		*s |= 1 << i
	}
}

// with returns the set plus the scanner's flags as a list in model.Flags
// order: the set's one list (see list); a scan flag unknown to model.Flags
// is kept at the end, in a fresh list.
func (s flagSet) with(scan []model.Flag) []model.Flag {
	var extra []model.Flag
	for _, f := range scan {
		if i := slices.Index(model.Flags, f); i >= 0 {
			s |= 1 << i
		} else if !slices.Contains(extra, f) {
			extra = append(extra, f)
		}
	}
	if len(extra) == 0 {
		return s.list()
	}
	return append(s.build(len(extra)), extra...)
}

// build makes a fresh list of the set, with room for spare more flags.
func (s flagSet) build(spare int) []model.Flag {
	out := make([]model.Flag, 0, bits.OnesCount32(uint32(s))+spare)
	for i, f := range model.Flags {
		if s&(1<<i) != 0 {
			out = append(out, f)
		}
	}
	return out
}

// addFlag inserts f into flags (kept in model.Flags order) unless present.
func addFlag(flags []model.Flag, f model.Flag) []model.Flag {
	if slices.Contains(flags, f) {
		return flags
	}
	var s flagSet
	s.add(f)
	return s.with(flags)
}
