package scanner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// compactingLine is a registry line naming child c of infra.
func compactingLine(infra, c string) string {
	b, _ := json.Marshal(map[string]any{"heartbeat": filepath.Join(infra, c, protocol.HeartbeatFile), "team": "t", "task_id": nil, "status": "active"})
	return string(b)
}

// orphanedCompaction writes, in the infra dir of a running lead, what a
// compaction killed in its drain leaves (SPEC §5.3): the new `.children`
// (the kept line k, the line c carried after the rename, and n, appended to
// the new file since), the replaced file `.children.compacting` (the
// dropped line d, k, c, and u1, u2 appended through descriptors opened
// before the rename and not carried yet), and the record of how far it was
// carried. It returns the lines the registry holds, each once, in order.
func orphanedCompaction(t *testing.T, root string) (lead string, want []string) {
	t.Helper()
	pid, started := self(t)
	lead = filepath.Join(root, "lead")
	writeHeartbeat(t, lead, pid, started, "running", "")
	d, k, c, n, u1, u2 := compactingLine(lead, "d"), compactingLine(lead, "k"), compactingLine(lead, "c"),
		compactingLine(lead, "n"), compactingLine(lead, "u1"), compactingLine(lead, "u2")
	reg := filepath.Join(lead, protocol.RegistryFile)
	if err := os.WriteFile(reg, []byte(k+"\n"+c+"\n"+n+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reg+".compacting", []byte(d+"\n"+k+"\n"+c+"\n"+u1+"\n"+u2+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(reg)
	if err != nil {
		t.Fatal(err)
	}
	record := fmt.Sprintf(`{"registry_ino":%d,"carried":%d,"end":%d}`,
		fi.Sys().(*syscall.Stat_t).Ino, len(d+k+c)+3, len(k+c)+2)
	if err := os.WriteFile(reg+".compacting.carried", []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	return lead, []string{k, c, n, u1, u2}
}

// registryRaw lists the lines of a node's registry as written.
func registryRaw(n *model.Node) []string {
	var out []string
	for _, l := range n.RegistryLines() {
		if l.Raw == nil && l.Entry != nil {
			// The watcher keeps no bytes: the entry, written as
			// compactingLine writes it (the keys sorted), is the line.
			e := l.Entry
			b, _ := json.Marshal(map[string]any{"heartbeat": e.Heartbeat, "team": e.Team, "task_id": e.TaskID, "status": e.Status})
			out = append(out, string(b))
			continue
		}
		out = append(out, string(l.Raw))
	}
	return out
}

// sameLines reports whether node id's registry holds exactly want.
func sameLines(s *model.Snapshot, id string, want []string) bool {
	n := s.Node(id)
	return n != nil && strings.Join(registryRaw(n), "\n") == strings.Join(want, "\n")
}

// fileContents reads the named files, "" for one that is missing.
func fileContents(paths ...string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		b, _ := os.ReadFile(p)
		out[i] = string(b)
	}
	return out
}

// SPEC §5.3: while a compaction's replaced registry exists, the registry a
// scan sees is `.children` plus the lines of `.children.compacting` not yet
// carried over: none shown twice, none lost.
func TestScanShowsACompactionsUncarriedLinesOnce(t *testing.T) {
	root := t.TempDir()
	lead, want := orphanedCompaction(t, root)
	snap, err := Scan(Options{Roots: []string{root}, Thresholds: testThresholds})
	if err != nil {
		t.Fatal(err)
	}
	if !sameLines(snap, "lead", want) {
		t.Fatalf("registry of lead:\n%s\nwant:\n%s", strings.Join(registryRaw(mustNode(t, snap, "lead")), "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []string{"k", "c", "n", "u1", "u2"} {
		mustNode(t, snap, "lead/"+c)
	}
	if n := snap.Node("lead/d"); n != nil {
		t.Fatalf("the line compaction dropped came back: %+v", n)
	}
	if n := mustNode(t, snap, "lead"); n.RegistryCompacting() != filepath.Join(lead, protocol.RegistryFile+".compacting") {
		t.Fatalf("RegistryCompacting = %q", n.RegistryCompacting())
	}
}

// SPEC §5.3, --readonly: a watcher that may not write shows the replaced
// registry's uncarried lines once, follows what is appended to it, and
// changes no file.
func TestReadonlyWatcherShowsAnOrphanedCompactionAndWritesNothing(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			lead, want := orphanedCompaction(t, root)
			reg := filepath.Join(lead, protocol.RegistryFile)
			files := []string{reg, reg + ".compacting", reg + ".compacting.carried"}
			before := fileContents(files...)
			w := newTestWatcher(t, m.wo, root)
			if !sameLines(w.Snapshot(), "lead", want) {
				t.Fatalf("first snapshot's registry of lead:\n%s\nwant:\n%s", strings.Join(registryRaw(mustNode(t, w.Snapshot(), "lead")), "\n"), strings.Join(want, "\n"))
			}
			// A writer that holds the replaced file open appends to it.
			u3 := compactingLine(lead, "u3")
			f, err := os.OpenFile(reg+".compacting", os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte(u3 + "\n")); err != nil {
				t.Fatal(err)
			}
			f.Close()
			before[1] += u3 + "\n"
			want = append(want, u3)
			// The node was re-read for this update, and a watcher that may
			// write finishes a compaction within that re-read: by now it
			// would have written.
			await(t, w, "u3 seen in the replaced registry", func(s *model.Snapshot) bool { return sameLines(s, "lead", want) })
			if after := fileContents(files...); strings.Join(after, "\x00") != strings.Join(before, "\x00") {
				t.Fatalf("a read-only watcher changed the files:\n%q\nwere:\n%q", after, before)
			}
		})
	}
}

// SPEC §5.3: a watcher that may write finishes what a compaction left: the
// uncarried lines are carried into `.children` once, the replaced file and
// its record are removed, and the registry shown stays the same throughout.
func TestWatcherFinishesAnOrphanedCompaction(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			lead, want := orphanedCompaction(t, root)
			reg := filepath.Join(lead, protocol.RegistryFile)
			wo := m.wo
			wo.RecoverCompactions = true
			w := newTestWatcher(t, wo, root)
			deadline := time.Now().Add(5 * time.Second) // hang guard
			for {
				got, _ := os.ReadFile(reg)
				_, err := os.Lstat(reg + ".compacting")
				if string(got) == strings.Join(want, "\n")+"\n" && os.IsNotExist(err) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the watcher did not finish the compaction: .children:\n%s\n.children.compacting: %v", got, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if left, _ := filepath.Glob(reg + ".*"); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
			await(t, w, "registry shown once", func(s *model.Snapshot) bool {
				n := s.Node("lead")
				return sameLines(s, "lead", want) && n.RegistryCompacting() == ""
			})
		})
	}
}
