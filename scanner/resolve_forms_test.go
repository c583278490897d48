package scanner

import (
	"path/filepath"
	"strings"
	"testing"
)

// SPEC §5: every command takes every form of a node's id that a screen or
// a document shows: with the prefix several roots give it, as seen from a
// root further up or further down the same tree, whatever the working
// directory; never a form that leaves out an ancestor node.
func TestResolveNodeTakesEveryShownForm(t *testing.T) {
	dir := t.TempDir()
	sessions := filepath.Join(dir, ".sessions")
	hb := node(t, sessions, "20261122-091500", "")
	node(t, sessions, "20261122-091500/code/20261122-091510", hb)
	store := filepath.Join(dir, ".teaparty")
	node(t, store, "jobs/job-103", "")
	t.Chdir(t.TempDir()) // not where the roots are

	tests := []struct {
		name    string
		roots   []string
		arg     string
		want    string
		wantErr string
	}{
		{name: "the prefix of two roots, given one", roots: []string{sessions}, arg: ".sessions/20261122-091500", want: "20261122-091500"},
		{name: "a child with the prefix", roots: []string{sessions}, arg: ".sessions/20261122-091500/code/20261122-091510", want: "20261122-091500/code/20261122-091510"},
		{name: "no prefix, given two roots", roots: []string{sessions, store}, arg: "20261122-091500", want: ".sessions/20261122-091500"},
		{name: "a store opened at its top, the id shown from below", roots: []string{store}, arg: "job-103", want: "jobs/job-103"},
		{name: "a store opened below, the id shown from its top", roots: []string{filepath.Join(store, "jobs")}, arg: "jobs/job-103", want: "job-103"},
		{name: "a store opened below, the id with two roots' prefix", roots: []string{filepath.Join(store, "jobs")}, arg: ".teaparty/jobs/job-103", want: "job-103"},
		{name: "a tail that leaves out an ancestor node is not an id", roots: []string{sessions}, arg: "20261122-091510", wantErr: "no such node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := forest(t, Options{Roots: tt.roots})
			n, err := ResolveNode(snap, tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v (node %v), want %q", err, n, tt.wantErr)
				}
				return
			}
			if err != nil || n.ID != tt.want {
				t.Fatalf("ResolveNode(%q) = %v, %v; want %s (ids: %v)", tt.arg, n, err, tt.want, ids(snap))
			}
		})
	}
}
