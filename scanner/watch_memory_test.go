package scanner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// TestWatcherKeepsOneCopyOfTheForest: SPEC §8 "100,000 nodes: ≤ 300 MiB
// RSS". The published snapshot is the engine's only copy of the nodes: the
// record of every node read holds that snapshot's own node as its facts,
// from the first snapshot on and after every kind of change. And a
// snapshot, once published, is never written: the change shows in the next
// one only.
func TestWatcherKeepsOneCopyOfTheForest(t *testing.T) {
	root := t.TempDir()
	if err := treegen.Generate(root, 2, 4, 3, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	lead := filepath.Join(root, "20260308-000000")
	leadHB := filepath.Join(lead, protocol.HeartbeatFile)
	pid, started := self(t)
	// A reason quoting an age as text, which the refresh renews.
	registerNeverStarted(t, filepath.Join(root, "20260308-000001"))
	later := time.Now().Add(time.Minute)
	tests := []struct {
		name   string
		change func(t *testing.T, w *Watcher)
	}{
		{"the first snapshot", func(*testing.T, *Watcher) {}},
		{"a beat", func(t *testing.T, w *Watcher) {
			setMtime(t, leadHB, later)
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"a file read again, the edges kept", func(t *testing.T, w *Watcher) {
			setMtime(t, filepath.Join(lead, protocol.CfaFile), later)
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"a new child, the forest linked again", func(t *testing.T, w *Watcher) {
			child := filepath.Join(lead, "team9", "new")
			hb := writeHeartbeat(t, child, pid, started, "running", leadHB)
			appendLine(t, filepath.Join(lead, protocol.RegistryFile), map[string]any{"heartbeat": hb, "status": "active"})
			w.restat(false)
			w.flush(eventBatch{}, false)
		}},
		{"the refresh of the ages reasons quote as text", func(t *testing.T, w *Watcher) {
			w.due.ticks = reasonRefreshTicks - 1
			w.publish(w.now(), true)
		}},
	}
	// One watcher goes through the changes in turn, driven here rather
	// than by Run, so that its records can be read between two steps.
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.Snapshot()
			seen := fingerprint(before)
			publishes := w.stats.publishes
			tt.change(t, w)
			if w.stats.publishes == publishes && tt.name != "the first snapshot" {
				t.Fatal("the change was not published")
			}
			if got := fingerprint(before); got != seen {
				t.Errorf("a published snapshot was written:\nbefore %s\nafter  %s", seen, got)
			}
			snap := w.Snapshot()
			byDir := map[string]*model.Node{}
			for _, s := range snap.Sessions {
				s.Walk(func(n *model.Node) { byDir[n.InfraDir] = n })
			}
			if len(w.nodes.byDir) == 0 {
				t.Fatal("no node records")
			}
			for dir, ln := range w.nodes.byDir {
				if n := byDir[dir]; ln.n != n || ln.own {
					t.Errorf("%s: the record's facts are not the published node (own copy %v)", dir, ln.own)
				}
			}
		})
	}
}

// fingerprint renders what a snapshot shows of every node.
func fingerprint(snap *model.Snapshot) string {
	out := fmt.Sprint(snap.NodeCount())
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			out += fmt.Sprintf("\n%s<%s beat=%v act=%v cfa=%p reg=%d %s %v %q", n.ID, n.ParentID, n.BeatMtime.UnixNano(),
				n.ActivityMtime.UnixNano(), n.Cfa, len(n.RegistryLines()), n.State, n.Flags, n.Reason)
		})
	}
	return out
}

// TestWatcherKeepsNoFileBytes: SPEC §8 "100,000 nodes: ≤ 300 MiB RSS". The
// live engine's nodes keep none of their files' bytes (the heartbeat as
// read, the registry lines verbatim, the CfA history), which the detail
// pane reads when it opens: not from the first snapshot, nor after a node
// is read again, nor after a registry's appended lines are read.
func TestWatcherKeepsNoFileBytes(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	lead := filepath.Join(root, "20260308-000000")
	leadHB := writeHeartbeat(t, lead, pid, started, "running", "")
	childHB := writeHeartbeat(t, filepath.Join(lead, "team1", "a"), pid, started, "running", leadHB)
	reg := filepath.Join(lead, protocol.RegistryFile)
	appendLine(t, reg, map[string]any{"heartbeat": childHB, "team": "team1", "status": "active"})
	cfa := filepath.Join(lead, protocol.CfaFile)
	writeCfa := func(history ...string) {
		b, err := json.Marshal(map[string]any{"state": "TASK_IN_PROGRESS", "phase": "execution", "history": history})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfa, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfa("PROPOSAL", "TASK")
	later := time.Now().Add(time.Minute)
	tests := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"the first snapshot", func(*testing.T) {}},
		{"a node read again", func(t *testing.T) {
			writeHeartbeat(t, lead, pid, started, "waiting", "")
			writeCfa("PROPOSAL", "TASK", "EXECUTE")
			setMtime(t, filepath.Join(lead, protocol.HeartbeatFile), later)
			setMtime(t, cfa, later)
		}},
		{"a registry's appended line", func(t *testing.T) {
			hb := writeHeartbeat(t, filepath.Join(lead, "team1", "b"), pid, started, "running", leadHB)
			appendLine(t, reg, map[string]any{"heartbeat": hb, "team": "team1", "status": "active"})
		}},
	}
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(t)
			w.restat(false)
			w.flush(eventBatch{}, false)
			snap := w.Snapshot()
			n := snap.Node("20260308-000000")
			if n == nil || n.Cfa == nil || len(n.RegistryLines()) == 0 || n.Heartbeat == nil {
				t.Fatalf("the lead's facts were not read: %+v", n)
			}
			for id, n := range snap.Nodes() {
				if n.HeartbeatRaw() != nil {
					t.Errorf("%s: %d bytes of heartbeat kept", id, len(n.HeartbeatRaw()))
				}
				if n.Cfa != nil && n.Cfa.CfaDetail != nil && n.Cfa.History != nil {
					t.Errorf("%s: the CfA history kept: %q", id, n.Cfa.History)
				}
				for _, l := range n.RegistryLines() {
					if l.Raw != nil {
						t.Errorf("%s: registry line %d kept its bytes %q", id, l.Number, l.Raw)
					}
				}
			}
		})
	}
	if n := w.Snapshot().NodeCount(); n != 3 {
		t.Errorf("%d nodes at the end, want 3", n)
	}
}

// TestWatcherFollowsALineRewrittenInPlace: without the lines' bytes, a
// registry rewritten with as many lines but another entry (a team renamed)
// still reaches the forest when its node is read again whole (its heartbeat
// changed too): the entries are compared, not only counted.
func TestWatcherFollowsALineRewrittenInPlace(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	lead := filepath.Join(root, "20260308-000000")
	leadHB := writeHeartbeat(t, lead, pid, started, "running", "")
	childHB := writeHeartbeat(t, filepath.Join(lead, "team1", "a"), pid, started, "running", leadHB)
	reg := filepath.Join(lead, protocol.RegistryFile)
	appendLine(t, reg, map[string]any{"heartbeat": childHB, "team": "alpha", "status": "active"})
	w, err := NewWatcher(Options{Roots: []string{root}, Thresholds: testThresholds}, WatchOptions{Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	child := "20260308-000000/team1/a"
	if got := w.Snapshot().Node(child).Team(); got != "alpha" {
		t.Fatalf("team %q at the start, want alpha", got)
	}
	// A new file (a new inode) of one line, as a compaction leaves it.
	b, err := json.Marshal(map[string]any{"heartbeat": childHB, "team": "gamma", "status": "active"})
	if err != nil {
		t.Fatal(err)
	}
	tmp := reg + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, reg); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	setMtime(t, reg, later)
	writeHeartbeat(t, lead, pid, started, "waiting", "")
	setMtime(t, leadHB, later)
	w.restat(false)
	w.flush(eventBatch{}, false)
	if got := w.Snapshot().Node(child).Team(); got != "gamma" {
		t.Errorf("team %q after the rewrite, want gamma", got)
	}
}

// TestAFileSignatureIs32Bytes: SPEC §8's budget. Every node the watcher
// holds keeps a signature of each file it was read from (three or four), so
// a signature names its file by a pointer to the one copy of the name, not
// a string of its own: 32 bytes, not 40, three of them in the 96-byte size
// class, not the 128.
func TestAFileSignatureIs32Bytes(t *testing.T) {
	if got := unsafe.Sizeof(namedSig{}); got > 32 {
		t.Errorf("a file signature is %d bytes, past 32", got)
	}
}

// A signature's name is the one copy of that name, whichever node's
// listing it came from, and reads as the name it was given.
func TestSignaturesOfTwoNodesHoldOneCopyOfAName(t *testing.T) {
	stream := "." + strings.Repeat("x", 40) + protocol.StreamSuffix
	var a, b fileSigs
	a.set(string([]byte(stream)), fileSig{mtime: 1})
	b.set(string([]byte(stream)), fileSig{mtime: 2})
	b.set(protocol.HeartbeatFile, fileSig{mtime: 3})
	if a[0].name.Value() != stream || !sameString(a[0].name.Value(), b[0].name.Value()) {
		t.Errorf("names %q and %q, want one copy of %q", a[0].name.Value(), b[0].name.Value(), stream)
	}
	if s, ok := b.get(protocol.HeartbeatFile); !ok || s.mtime != 3 {
		t.Errorf("the heartbeat's signature %+v, %v", s, ok)
	}
}

// TestANodeRecordIs48Bytes: SPEC §8's budget. The watcher keeps a record of
// every node; where a registry's next read starts is behind a pointer, made
// when a registry is read in part (a parent's `.children` appended to), so
// a record is 48 bytes, not 64.
func TestANodeRecordIs48Bytes(t *testing.T) {
	if got := unsafe.Sizeof(liveNode{}); got > 48 {
		t.Errorf("a node record is %d bytes, past 48", got)
	}
}
