package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests of the other sources (docs/sources.md): each builds
// a system's store through the system's own schema, runs the built binary's
// `--once --json` over it and checks every row of the system's mapping as
// the document shows it — state, flags, action, reason, and the source's
// fields in their order.

// e2eNode is a node of the --once --json document, as these tests read it.
type e2eNode struct {
	ID           string   `json:"id"`
	InfraDir     string   `json:"infra_dir"`
	Source       string   `json:"source"`
	Key          string   `json:"heartbeat"`
	State        string   `json:"state"`
	Flags        []string `json:"flags"`
	Reason       string   `json:"reason"`
	Action       string   `json:"action"`
	Role         string   `json:"role"`
	Team         string   `json:"team"`
	TaskID       *string  `json:"task_id"`
	PID          *int     `json:"pid"`
	Started      *float64 `json:"started"`
	Status       *string  `json:"status"`
	Blocked      *string  `json:"blocked"`
	Parent       *string  `json:"parent"`
	SourceFields []struct {
		Name, Value string
	} `json:"source_fields"`
	Children []e2eNode `json:"children"`
}

// e2eDoc is the --once --json document, its nodes flattened by key.
type e2eDoc struct {
	Problems []struct{ Path, Error string } `json:"problems"`
	Sessions []e2eNode                      `json:"sessions"`
	byKey    map[string]*e2eNode
	parentOf map[string]string // key → the parent's key
}

// onceDoc runs the binary's --once --json over roots and flattens it.
func onceDoc(t *testing.T, roots ...string) *e2eDoc {
	t.Helper()
	return onceDocEnv(t, nil, roots...)
}

// onceDocEnv is onceDoc with env added to the binary's environment.
func onceDocEnv(t *testing.T, env []string, roots ...string) *e2eDoc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--once", "--json", "--fail-on", "none"}, roots...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("--once --json: %v: %s", err, stderr.String())
	}
	doc := &e2eDoc{byKey: map[string]*e2eNode{}, parentOf: map[string]string{}}
	if err := json.Unmarshal(out, doc); err != nil {
		t.Fatalf("--once --json: %v\n%s", err, out)
	}
	var walk func(parent string, ns []e2eNode)
	walk = func(parent string, ns []e2eNode) {
		for i := range ns {
			n := &ns[i]
			if _, dup := doc.byKey[n.Key]; dup {
				t.Errorf("two nodes keyed %s", n.Key)
			}
			doc.byKey[n.Key] = n
			doc.parentOf[n.Key] = parent
			walk(n.Key, n.Children)
		}
	}
	walk("", doc.Sessions)
	return doc
}

// fieldNames are a node's source fields' names, in order.
func (n *e2eNode) fieldNames() []string {
	var out []string
	for _, f := range n.SourceFields {
		out = append(out, f.Name)
	}
	return out
}

func (n *e2eNode) field(name string) string {
	for _, f := range n.SourceFields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// mappingRow is what one row of a system's mapping must show.
type mappingRow struct {
	row     string // the mapping row, as docs/sources.md words it
	key     string // the node's key ("heartbeat" in the document)
	absent  bool   // the row makes no node
	state   string
	flags   []string // exactly these, in any order
	action  string
	reason  []string // each a part of the reason
	status  string   // the heartbeat status the source gave ("" not checked)
	pid     int      // -1: null
	started float64  // the started shown; 0 not checked
	infra   string   // the infra dir; "" not checked
	parent  string   // the parent's key ("" a session)
	blocked string   // a part of the question; "" none
	fields  []string // the source fields' names, in this order
	values  map[string]string
}

// check compares the document's node with the row.
func (r mappingRow) check(t *testing.T, doc *e2eDoc) {
	t.Helper()
	n := doc.byKey[r.key]
	if r.absent {
		if n != nil {
			t.Errorf("%s: a node %s (%s), want none", r.row, r.key, n.State)
		}
		return
	}
	if n == nil {
		keys := make([]string, 0, len(doc.byKey))
		for k := range doc.byKey {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Errorf("%s: no node %s among\n  %s", r.row, r.key, strings.Join(keys, "\n  "))
		return
	}
	var bad []string
	if n.State != r.state {
		bad = append(bad, fmt.Sprintf("state %s, want %s", n.State, r.state))
	}
	if got, want := slices.Sorted(slices.Values(n.Flags)), slices.Sorted(slices.Values(r.flags)); !slices.Equal(got, want) {
		bad = append(bad, fmt.Sprintf("flags %v, want %v", got, want))
	}
	if n.Action != r.action {
		bad = append(bad, fmt.Sprintf("action %s, want %s", n.Action, r.action))
	}
	for _, part := range r.reason {
		if !strings.Contains(n.Reason, part) {
			bad = append(bad, fmt.Sprintf("reason lacks %q", part))
		}
	}
	if r.status != "" && (n.Status == nil || *n.Status != r.status) {
		bad = append(bad, fmt.Sprintf("status %v, want %s", deref(n.Status), r.status))
	}
	switch {
	case r.pid == -1 && n.PID != nil:
		bad = append(bad, fmt.Sprintf("pid %d, want null", *n.PID))
	case r.pid != -1 && (n.PID == nil || *n.PID != r.pid):
		bad = append(bad, fmt.Sprintf("pid %v, want %d", deref(n.PID), r.pid))
	}
	if r.started != 0 && (n.Started == nil || math.Abs(*n.Started-r.started) > 1e-3) {
		bad = append(bad, fmt.Sprintf("started %v, want %v", deref(n.Started), r.started))
	}
	if r.infra != "" && n.InfraDir != r.infra {
		bad = append(bad, fmt.Sprintf("infra dir %s, want %s", n.InfraDir, r.infra))
	}
	if got := doc.parentOf[r.key]; got != r.parent {
		bad = append(bad, fmt.Sprintf("under %q, want under %q", got, r.parent))
	}
	switch {
	case r.blocked == "" && n.Blocked != nil:
		bad = append(bad, fmt.Sprintf("blocked %q, want none", *n.Blocked))
	case r.blocked != "" && (n.Blocked == nil || !strings.Contains(*n.Blocked, r.blocked)):
		bad = append(bad, fmt.Sprintf("blocked %v, want %q", deref(n.Blocked), r.blocked))
	}
	if r.fields != nil && !slices.Equal(n.fieldNames(), r.fields) {
		bad = append(bad, fmt.Sprintf("fields %v, want %v", n.fieldNames(), r.fields))
	}
	for name, want := range r.values {
		if got := n.field(name); got != want {
			bad = append(bad, fmt.Sprintf("field %s = %q, want %q", name, got, want))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s (%s):\n  %s\n  reason: %s", r.row, r.key, strings.Join(bad, "\n  "), n.Reason)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// writeAged writes content to path (making its dir) with an mtime age ago.
func writeAged(t *testing.T, path, content string, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-age)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// storeBytes is the content of every file of a store dir (a database and
// its -wal included; SQLite's -shm, its readers' shared index, left out),
// by path: a store read must leave it as it was, byte for byte.
func storeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "-shm") {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameBytes fails the test for every file of before that changed or went,
// and every file that came, in after.
func sameBytes(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s changed (%d bytes, then %d): a read must not write a store", p, len(b), len(a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !strings.HasSuffix(p, "-wal") {
			t.Errorf("%s appeared: a read must not write a store", p)
		}
	}
}

// epoch is t as TeaParty stores times (REAL seconds).
func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
