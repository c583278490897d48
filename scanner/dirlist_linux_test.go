package scanner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// A worker lists directory after directory into one listing: each listing
// gives what os.ReadDir gives for its own directory, whatever the one
// before it held (more entries, fewer, none, more than one read of the
// kernel's takes).
func TestListingReusedGivesEachDirectoryItsOwnEntries(t *testing.T) {
	root := t.TempDir()
	dirs := []struct {
		name  string
		files []string
		dirs  []string
	}{
		{"node", []string{protocol.HeartbeatFile, protocol.CfaFile, protocol.RegistryFile, "a.exec-stream.jsonl", "odd name"}, []string{"team1", protocol.MiddleDir}},
		{"fewer", []string{protocol.HeartbeatFile}, []string{"b"}},
		{"empty", nil, nil},
		{"large", manyNames(1200), nil}, // over one 32 KiB read of the kernel's
		{"small after large", []string{protocol.RunningFile, "z"}, nil},
	}
	var l listing
	for _, d := range dirs {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(root, d.name)
			for _, sub := range append([]string{""}, d.dirs...) {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range d.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			parent, _, err := openDir(root)
			if err != nil {
				t.Fatal(err)
			}
			defer parent.close()
			h, got, err := openDirAt(parent, d.name, dir, &l)
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			want, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("listed %d entries, os.ReadDir %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() {
					t.Errorf("entry %d: %q %v, os.ReadDir %q %v", i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
				}
			}
		})
	}
}

func manyNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("entry-with-a-longish-name-%04d", i)
	}
	return names
}

// Listing a node dir into a worker's listing costs no allocation once the
// listing has grown: the names a node dir holds are the contract's own
// strings, opened relative to the parent the name is not copied, and the
// entries are made where the last listing's were.
func TestListingReusedAllocatesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "node")
	if err := os.MkdirAll(filepath.Join(dir, protocol.MiddleDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{protocol.HeartbeatFile, protocol.CfaFile, protocol.RegistryFile, execStream, protocol.MergedFile, protocol.RetryCountFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parent, _, err := openDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.close()
	var l listing
	list := func() {
		h, entries, err := openDirAt(parent, "node", dir, &l)
		if err != nil || len(entries) != 7 {
			t.Fatalf("openDirAt: %d entries, %v", len(entries), err)
		}
		h.close()
	}
	list() // grows the listing
	if allocs := testing.AllocsPerRun(50, list); allocs != 0 {
		t.Errorf("listing a node dir of 7 entries again: %v allocations, want 0", allocs)
	}
}
