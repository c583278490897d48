package main

import (
	"maps"
	"slices"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/manpage"
)

// The man pages committed in docs/man are what `make man` generates from
// the commands now: a flag or command added, changed or removed without
// regenerating them fails here.
func TestManPagesAreCurrent(t *testing.T) {
	fresh := t.TempDir()
	if err := manpage.Write(fresh); err != nil {
		t.Fatal(err)
	}
	want, err := manpage.Pages(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := manpage.Pages(manpage.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no page generated")
	}
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Fatalf("%s holds %v, the commands make %v: run `make man`", manpage.Dir, g, w)
	}
	for name, page := range want {
		if got[name] != page {
			t.Errorf("%s/%s differs from the commands: run `make man`", manpage.Dir, name)
		}
	}
}
