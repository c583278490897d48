package liveness

import "github.com/dispatchtop/dispatchtop/model"

// flagSet collects a node's flags as bits of their index in model.Flags, so
// that the list comes out deduplicated and in display order whatever order
// the rules added them in.
type flagSet uint32

func flagIndex(f model.Flag) int {
	for i, g := range model.Flags {
		if g == f {
			return i
		}
	}
	return -1
}

func (s *flagSet) add(f model.Flag) {
	if i := flagIndex(f); i >= 0 {
		*s |= 1 << i
	}
}

// with returns the set plus the scanner's flags as a fresh slice in
// model.Flags order; a scan flag unknown to model.Flags is kept at the end.
func (s flagSet) with(scan []model.Flag) []model.Flag {
	var extra []model.Flag
	for _, f := range scan {
		if i := flagIndex(f); i >= 0 {
			s |= 1 << i
		} else if !contains(extra, f) {
			extra = append(extra, f)
		}
	}
	out := make([]model.Flag, 0, bitCount(s)+len(extra))
	for i, f := range model.Flags {
		if s&(1<<i) != 0 {
			out = append(out, f)
		}
	}
	return append(out, extra...)
}

// addFlag inserts f into flags (kept in model.Flags order) unless present.
func addFlag(flags []model.Flag, f model.Flag) []model.Flag {
	if contains(flags, f) {
		return flags
	}
	var s flagSet
	s.add(f)
	return s.with(flags)
}

func contains(flags []model.Flag, f model.Flag) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}

func bitCount(s flagSet) int {
	k := 0
	for ; s != 0; s &= s - 1 {
		k++
	}
	return k
}
