package liveness

import (
	"maps"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

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

// flagLists holds, by set, the one list of each set of flags classified
// so far. A forest's nodes fall into a few sets (running, running quiet,
// dead kill candidate, ...), so a classification allocates no list, and
// every node of a set holds the same one: at 100,000 nodes a list each was
// some 3 MB a forest, in every copy the live engine makes of it (SPEC §8).
// The lists are never written: their capacity is their length, so an
// append copies. The map is replaced, never written, when a set is added:
// classifications on other goroutines read it without a lock.
var flagLists struct {
	byset atomic.Pointer[map[flagSet][]model.Flag]
	mu    sync.Mutex // held to add a set
}

// list is the set's one list; empty, never nil, for no flag (a classified
// node's flags are a list, as `--once --json` shows them).
func (s flagSet) list() []model.Flag {
	if m := flagLists.byset.Load(); m != nil {
		if l, ok := (*m)[s]; ok {
			return l
		}
	}
	flagLists.mu.Lock()
	defer flagLists.mu.Unlock()
	old := flagLists.byset.Load()
	if old != nil {
		if l, ok := (*old)[s]; ok {
			return l
		}
	}
	m := make(map[flagSet][]model.Flag, 1)
	if old != nil {
		maps.Copy(m, *old)
	}
	l := slices.Clip(s.build(0))
	m[s] = l
	flagLists.byset.Store(&m)
	return l
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
