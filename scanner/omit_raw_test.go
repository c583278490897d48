package scanner

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/report"
)

// A one-shot report shows no file's bytes: with OmitRaw the nodes keep none
// (no heartbeat, no registry line, no CfA history), and the report is the
// same, byte for byte, as the one of a scan that keeps them. The fixture holds every
// state, flag and action, bad files among them.
func TestOmitRawKeepsNoFileBytesAndChangesNoReport(t *testing.T) {
	dir := t.TempDir()
	fx := treegen.InstallFixture(t, dir)
	opts := Options{Roots: DefaultRoots(dir), Probe: fx.Probe(liveness.SystemProbe{}), Now: func() time.Time { return fx.Now }}
	kept, err := Scan(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.OmitRaw = true
	omitted, err := Scan(opts)
	if err != nil {
		t.Fatal(err)
	}
	var withRaw, heartbeats, lines, histories int
	for _, n := range kept.Nodes() {
		if n.HeartbeatRaw() != nil {
			withRaw++
		}
		if n.Cfa != nil && n.Cfa.CfaDetail != nil && len(n.Cfa.History) > 0 {
			histories++
		}
	}
	for id, n := range omitted.Nodes() {
		if n.HeartbeatRaw() != nil && n.Source == "" {
			t.Errorf("%s: %d bytes of heartbeat kept", id, len(n.HeartbeatRaw()))
		}
		if n.Heartbeat != nil {
			heartbeats++
		}
		if n.Cfa != nil && n.Cfa.CfaDetail != nil && n.Cfa.History != nil {
			t.Errorf("%s: the CfA history kept, %d entries", id, len(n.Cfa.History))
		}
		for _, l := range n.RegistryLines() {
			lines++
			if l.Raw != nil {
				t.Errorf("%s: registry line %d kept its bytes %q", id, l.Number, l.Raw)
			}
		}
	}
	if withRaw == 0 || heartbeats == 0 || lines == 0 || histories == 0 {
		t.Fatalf("the fixture proves nothing: %d nodes with bytes kept, %d heartbeats, %d registry lines, %d histories", withRaw, heartbeats, lines, histories)
	}
	var a, b bytes.Buffer
	if err := report.WriteJSON(&a, kept); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(&b, omitted); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("the report differs without the bytes:\n%s\nwith them:\n%s", b.Bytes(), a.Bytes())
	}
}

// A walked node's infra dir and its heartbeat's path are one string, the
// dir its prefix: at 100,000 nodes a path of its own each is 10 MB.
func TestWalkMakesTheDirAndItsHeartbeatPathInOneString(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.Generate(dir, 2, 10, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	w, err := Discover(Options{Roots: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 20 {
		t.Fatalf("%d nodes, want 20", len(w.Nodes))
	}
	for _, n := range w.Nodes {
		if n.HeartbeatPath != filepath.Join(n.InfraDir, protocol.HeartbeatFile) {
			t.Errorf("%s: heartbeat path %s", n.InfraDir, n.HeartbeatPath)
		}
		if n.InfraDir == dir {
			continue // a root is given, not made by the walk
		}
		if unsafe.StringData(n.InfraDir) != unsafe.StringData(n.HeartbeatPath) {
			t.Errorf("%s: its heartbeat path is a string of its own", n.InfraDir)
		}
	}
}

// The walk opens each subdirectory relative to its parent, held open until
// the last of them is opened: every directory it opens is closed by the
// end, whichever way its visit ends (a leaf, a git worktree, the depth
// bound).
func TestWalkClosesEveryDirectoryItOpens(t *testing.T) {
	dir := t.TempDir()
	if err := treegen.Generate(dir, 30, 10, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"wt/.git", "wt/a/b", "deep/1/2/3/4/5/6"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(entries)
	}
	before := fds()
	for range 5 {
		w, err := Discover(Options{Roots: []string{dir}, MaxDepth: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Nodes) != 300 {
			t.Fatalf("%d nodes, want 300", len(w.Nodes))
		}
	}
	if after := fds(); after != before {
		t.Errorf("%d descriptors open after the walks, %d before", after, before)
	}
}
