package liveness

// Interning, a speed measure (SPEC §8 memory) kept out of the rules' way:
// the reasons' texts and the flags' lists that nodes reading the same
// share, so that a fleet crossing a threshold in the same second costs one
// text and one list, not one a node. Nothing here decides what a node is.

import (
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dispatchtop/dispatchtop/model"
)

// reasonTexts are the reasons' texts made lately, so that nodes whose
// reasons read the same share one string: a fleet crossing a threshold in
// the same second ("beating, quiet: last beat 30s ago" on every node) costs
// one text, not one per node, in allocations and in the live heap (SPEC §8
// memory). A text with a node's own words in it (a pid, an id) takes a slot
// that the next one may take back: the table bounds what it keeps.
var reasonTexts textTable

// textSlots is the table's size: the texts of a fleet's common states at
// the ages its classification sees at once, with room to spare.
const textSlots = 4096

// textTable is a hash table of texts, one per slot, the newest made in it
// winning. Safe for concurrent use: a slot is swapped whole.
type textTable struct {
	seed  maphash.Seed
	slots [textSlots]atomic.Pointer[string]
}

func init() { reasonTexts.seed = maphash.MakeSeed() }

// join is the concatenation of parts: the table's string when it holds
// that text, else a new one, which it keeps. It never returns one of the
// parts (they may live in the caller's buffer).
func (t *textTable) join(parts ...string) string {
	// The parts are hashed one by one: a text is always made of the same
	// parts where it is made, and one made of other parts elsewhere costs
	// a second copy at worst.
	var h uint64
	n := 0
	for _, p := range parts {
		h = h*0x9e3779b97f4a7c15 ^ maphash.String(t.seed, p)
		n += len(p)
	}
	slot := &t.slots[h%textSlots]
	if kept := slot.Load(); kept != nil && joins(*kept, n, parts) {
		return *kept
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p)
	}
	s := b.String()
	slot.Store(&s)
	return s
}

// joins says whether s, of length n, is the concatenation of parts.
func joins(s string, n int, parts []string) bool {
	if len(s) != n {
		return false
	}
	for _, p := range parts {
		if s[:len(p)] != p {
			return false
		}
		s = s[len(p):]
	}
	return true
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
