package scanner

import (
	"strconv"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// placingStore is a sources.Rereader of n records that puts one record's
// node in place at each read, saying where (Facts.Changed) when say is set.
type placingStore struct {
	recordStore
	nodes []*model.Node
	next  int
	say   bool
}

func (s *placingStore) Reread(path string, now time.Time, k sources.Kept, _ []string) (sources.Facts, sources.Kept) {
	i := s.next % len(s.nodes)
	s.next++
	n := *s.nodes[i]
	n.BeatMtime = now.Add(time.Duration(s.next))
	s.nodes[i] = &n
	f := sources.Facts{Nodes: s.nodes}
	if s.say {
		f.Changed = []int{i}
	}
	return f, k
}

// The watcher's own cost of a read that put one node in place among a
// thousand, the store's read aside: what it stamps, copies and compares
// (SPEC §8, opencode-teams at 50 writes/s).
func BenchmarkStoreSeamOneNodeOfAThousand(b *testing.B) {
	for _, say := range []bool{false, true} {
		b.Run("changed said "+strconv.FormatBool(say), func(b *testing.B) {
			src := &placingStore{say: say}
			for i := range 1000 {
				id := "agent-" + strconv.Itoa(i)
				src.nodes = append(src.nodes, &model.Node{ID: id, HeartbeatPath: "/store/agents/" + id + ".json", HasHeartbeat: true})
			}
			r := Root{Path: "/store", Source: src}
			now := time.Now()
			f := rereadStore(r, now, storeFacts{}, nil)
			w := &Watcher{}
			w.stores.session, w.stores.patch = map[string]int32{}, map[string]*model.Node{}
			for _, n := range f.nodes {
				w.stores.session[n.HeartbeatPath] = 0
			}
			b.ReportAllocs()
			for b.Loop() {
				last := f
				f = rereadStore(r, now, f, []string{"/store/agents"})
				if ok, _ := w.patchStore(last, f); !ok {
					b.Fatal("a node put in place was not patched")
				}
			}
		})
	}
}
