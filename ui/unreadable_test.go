package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/chatroom"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/opencodeteams"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// SPEC §6, §10: a store that cannot be read beside a root that reads
// counts in the header's problems, and its problem — the file and the
// cause — is in the event pane, whether the root names its KIND or the
// store is found by its layout.
func TestHeaderCountsAnUnreadableStoreAndTheEventPaneNamesIt(t *testing.T) {
	storefixtures.EachUnreadable(t, func(t *testing.T, u storefixtures.Unreadable, as func(string) string) {
		if u.Denied && os.Geteuid() == 0 {
			t.Skip("root reads a file of mode 000; the end-to-end test runs the binary as nobody for this case")
		}
		dir := t.TempDir()
		root, file, err := u.Build(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		tree := filepath.Join(dir, "tree", "s1")
		if err := os.MkdirAll(tree, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, ".heartbeat"), []byte(`{"pid": 1, "started": 1, "status": "completed", "parent_heartbeat": null}`), 0o644); err != nil {
			t.Fatal(err)
		}
		arg := as(root)
		snap, err := scanner.Scan(scanner.Options{
			Roots:   []string{arg, filepath.Dir(tree)},
			Probe:   liveness.SystemProbe{},
			Sources: []sources.Source{teaparty.New(), &middle.Source{PaneLookup: func() (map[string]middle.Session, error) { return nil, nil }}, opencodeteams.Source{}, chatroom.Source{}},
		})
		if err != nil {
			t.Fatal(err)
		}
		m := newTestModel(t, 160, 30, Options{Initial: snap})
		header := strings.Join(strings.Split(stripped(m), "\n")[:m.frame.headerH], "\n")
		if !strings.Contains(header, "! 1 problems") {
			t.Errorf("header lacks the problem:\n%s", header)
		}
		found := false
		for _, e := range m.events {
			found = found || e.id == file && e.text == "problem" && strings.Contains(e.reason, file) && strings.Contains(e.reason, u.Cause)
		}
		if !found {
			t.Errorf("no event names %s with %q: %+v", file, u.Cause, m.events)
		}
	})
}
