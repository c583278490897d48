package scanner

import (
	"slices"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// The fixture tree of testdata/sessions, scanned through both default
// roots, classifies as its expectations file says.
func TestFixtureTreeMatchesExpectations(t *testing.T) {
	dir := t.TempDir()
	fx := treegen.InstallFixture(t, dir)
	snap, err := Scan(Options{
		Roots: DefaultRoots(dir),
		Probe: fx.Probe(liveness.SystemProbe{}),
		Now:   func() time.Time { return fx.Now },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(snap) {
		if _, ok := fx.Expect[id]; !ok {
			t.Errorf("node %s is not in the expectations", id)
		}
	}
	for id, want := range fx.Expect {
		n := snap.Node(id)
		if n == nil {
			t.Errorf("%s: not found", id)
			continue
		}
		got := expectationOf(n)
		if got.State != want.State || got.Action != want.Action || !sameFlags(got.Flags, want.Flags) {
			t.Errorf("%s: got %s %v %s (%s), want %s %v %s", id, got.State, got.Flags, got.Action, n.Reason, want.State, want.Flags, want.Action)
		}
	}
}

// The fixture is complete: together its nodes show every state, flag and
// action.
func TestFixtureCoversEveryStateFlagAndAction(t *testing.T) {
	fx := treegen.InstallFixture(t, t.TempDir())
	states, flags, actions := map[model.State]bool{}, map[model.Flag]bool{}, map[model.Action]bool{}
	for _, e := range fx.Expect {
		states[e.State] = true
		actions[e.Action] = true
		for _, f := range e.Flags {
			flags[f] = true
		}
	}
	for _, s := range model.States {
		if !states[s] {
			t.Errorf("no fixture node is %s", s)
		}
	}
	for _, f := range model.Flags {
		if f == model.FlagIdle {
			// idle needs a per-turn source and an owner the live engine
			// recorded; no file of the native fixture can show it
			// (liveness/traits_test.go covers it with real processes).
			continue
		}
		if !flags[f] {
			t.Errorf("no fixture node has flag %s", f)
		}
	}
	for _, a := range []model.Action{model.ActionNone, model.ActionWait, model.ActionAnswer, model.ActionKill,
		model.ActionResume, model.ActionMerge, model.ActionSurface, model.ActionCompact} {
		if !actions[a] {
			t.Errorf("no fixture node recommends %s", a)
		}
	}
}

// expectationOf is what a classified node looks like in the expectations
// file: its state, every flag (classified and scan flags) and its action.
func expectationOf(n *model.Node) treegen.Expectation {
	flags := append([]model.Flag(nil), n.Flags...)
	for _, f := range n.ScanFlags() {
		if !slices.Contains(flags, f) {
			flags = append(flags, f)
		}
	}
	return treegen.Expectation{State: n.State, Flags: flags, Action: n.Action}
}

func sameFlags(a, b []model.Flag) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
