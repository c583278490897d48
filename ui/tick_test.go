package ui

import (
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// SPEC §3: the TUI re-evaluates ages on a 1 s tick with no file event. In a
// synctest bubble the tick fires at once on the fake clock.
func TestTickEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		m := New(Options{Initial: exampleSnapshot(), Now: time.Now})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		cmd := m.armTick()
		for i := 1; i <= 3; i++ {
			msg, ok := cmd().(tickMsg)
			if !ok {
				t.Fatalf("tick %d: not a tickMsg", i)
			}
			if got := time.Time(msg).Sub(start); got != time.Duration(i)*time.Second {
				t.Errorf("tick %d after %s, want %ds", i, got, i)
			}
			_, cmd = m.Update(msg)
			if cmd == nil {
				t.Fatalf("tick %d not re-armed", i)
			}
		}
		if !strings.Contains(stripped(m), time.Now().Format("15:04:05")) {
			t.Errorf("clock not at the fake now:\n%s", stripped(m))
		}
	})
}

// movingReasons gives every node that beats a reason quoting its beat's
// age, as the classifier writes one (model.ReasonAge), so that ticks move
// both age cells of a row: BEAT and the reason.
func movingReasons(snap *model.Snapshot) *model.Snapshot {
	for _, n := range snap.ByID {
		if n.BeatMtime.IsZero() {
			continue
		}
		age := model.FormatAge(snap.GeneratedAt.Sub(n.BeatMtime))
		const prefix = "beating, last beat "
		n.Reason = prefix + age + " ago (" + n.Reason + ")"
		n.ReasonAge = model.ReasonAge{Since: model.InstantOf(n.BeatMtime), At: int32(len(prefix)), Len: int32(len(age))}
	}
	return snap
}

// steppedClock is a clock a test moves by hand.
type steppedClock struct{ now time.Time }

func (c *steppedClock) Now() time.Time { return c.now }

// SPEC §8 idle CPU: a tick moves the clock and the ages and nothing else,
// so it redraws those cells and restyles no row: its frame is the frame
// the same screen drawn from scratch at that instant shows, for a fraction
// of its allocations, in every theme, after any change drawn before it
// (after), and where the tick cannot splice (the details, a dialog over the
// rows) still the same frame.
func TestTickRedrawsOnlyTheAges(t *testing.T) {
	cases := []struct {
		name  string
		w, h  int
		theme string
		setup func(m *Model)
		after func(m *Model) // a change drawn between the first frame and the tick
		cheap bool           // the tick is spliced, not rebuilt
	}{
		{name: "main 160x50", w: 160, h: 50, setup: func(m *Model) { m.moveTo(5000) }, cheap: true},
		{name: "main 80x24", w: 80, h: 24, cheap: true},
		{name: "marked and collapsed", w: 120, h: 40, setup: func(m *Model) {
			press(m, "j")
			press(m, "v")
			press(m, "j")
			press(m, "space")
		}, cheap: true},
		{name: "events open", w: 120, h: 40, setup: func(m *Model) { press(m, "e") }, cheap: true},
		{name: "filter typing", w: 100, h: 30, setup: func(m *Model) { press(m, "/"); press(m, "d") }, cheap: true},
		{name: "help", w: 120, h: 40, setup: func(m *Model) { press(m, "?") }, cheap: true},
		{name: "narrow 40x12", w: 40, h: 12, cheap: true},
		{name: "theme light", w: 120, h: 40, theme: themes.Light, cheap: true},
		{name: "theme mono", w: 120, h: 40, theme: themes.Mono, cheap: true},
		{name: "theme high-contrast", w: 120, h: 40, theme: themes.HighContrast, cheap: true},
		{name: "after the theme cycled", w: 120, h: 40, after: func(m *Model) {
			press(m, "t")
			// The theme's notice fades within the ticks measured
			// (statusFade); the rows restyled are what this case is about.
			m.setStatus("", false)
		}, cheap: true},
		{name: "after the cursor moved", w: 120, h: 40, after: func(m *Model) { press(m, "j") }, cheap: true},
		{name: "after an unmark", w: 120, h: 40, setup: func(m *Model) { press(m, "v") }, after: func(m *Model) {
			// Back on the marked row and unmark it: the cursor leaves it as it was.
			press(m, "k")
			press(m, "v")
		}, cheap: true},
		{name: "after a collapse", w: 120, h: 40, after: func(m *Model) { press(m, "space") }, cheap: true},
		{name: "after a resize", w: 120, h: 40, after: func(m *Model) { m.Update(tea.WindowSizeMsg{Width: 130, Height: 40}) }, cheap: true},
		{name: "after a session was replaced", w: 120, h: 40, after: replaceFirstSession(), cheap: true},
		{name: "details", w: 120, h: 40, setup: func(m *Model) { press(m, "j"); run(m, press(m, "enter")) }},
		{name: "dialog", w: 120, h: 40, setup: func(m *Model) { m.moveTo(4); run(m, press(m, "x")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := themes.Set{Themes: themes.Builtins()}
			for i, th := range set.Themes {
				if th.Name == tc.theme {
					set.Start = i
				}
			}
			newModel := func(clock *steppedClock) *Model {
				m := New(Options{Initial: movingReasons(bigSnapshot(10000)), Now: clock.Now, Tick: -1,
					Runner: &fakeRunner{}, Journal: journalOf(), Themes: set})
				m.Update(tea.WindowSizeMsg{Width: tc.w, Height: tc.h})
				if tc.setup != nil {
					tc.setup(m)
				}
				return m
			}
			clock := &steppedClock{now: clock12}
			m := newModel(clock)
			_ = m.View()
			if tc.after != nil {
				tc.after(m)
				_ = m.View()
			}
			var ticked string
			allocs := testing.AllocsPerRun(5, func() {
				clock.now = clock.now.Add(time.Second)
				m.Update(tickMsg(clock.now))
				ticked = m.View().Content
			})
			// The same screen drawn from scratch at the tick's instant.
			fresh := newModel(&steppedClock{now: clock.now})
			if tc.after != nil {
				tc.after(fresh)
			}
			var want string
			rebuild := allocsOf(func() { want = fresh.View().Content })
			if ticked != want {
				t.Fatalf("the ticked frame differs from a rebuild at the same instant:\n%s\nwant:\n%s", ansi.Strip(ticked), ansi.Strip(want))
			}
			if tc.cheap && allocs*4 > float64(rebuild) {
				t.Errorf("a tick allocates %.0f times, a frame from scratch %d: the tick restyles what did not move", allocs, rebuild)
			}
		})
	}
}

// replaceFirstSession is a change for TestTickRedrawsOnlyTheAges: an
// update whose snapshot shares every session with the shown one but the
// first, which is new and whose lead died, as the watcher publishes one
// session reclassified. The same update goes to every model it is run on.
func replaceFirstSession() func(m *Model) {
	var next *model.Snapshot
	return func(m *Model) {
		if next == nil {
			changed := movingReasons(bigSnapshot(10000)).Sessions[0]
			changed.State, changed.Reason, changed.ReasonAge = model.StateDead, "pid 1000 gone", model.ReasonAge{}
			cp := *m.snap
			cp.Sessions = slices.Clone(m.snap.Sessions)
			cp.Sessions[0] = changed
			cp.ByID = maps.Clone(m.snap.ByID)
			changed.Walk(func(n *model.Node) { cp.ByID[n.ID] = n })
			next = &cp
		}
		m.Update(updateMsg{update: model.Update{Snapshot: next}})
	}
}

// SPEC §8 idle CPU: a tick that moves no visible cell (the clock stood
// still, or the model is paused) hands the renderer the very frame it has,
// which it recognises without comparing a byte.
func TestTickThatMovesNothingKeepsTheFrame(t *testing.T) {
	for _, paused := range []bool{false, true} {
		m := newTestModel(t, 160, 50, Options{Initial: movingReasons(bigSnapshot(10000))})
		if paused {
			press(m, "p")
		}
		before := m.View().Content
		m.Update(tickMsg(clock12))
		after := m.View().Content
		if after != before {
			t.Fatalf("paused=%v: the frame changed on a tick that moved nothing", paused)
		}
		if unsafe.StringData(after) != unsafe.StringData(before) {
			t.Errorf("paused=%v: a tick that moved nothing rebuilt the frame", paused)
		}
	}
}

// allocsOf counts the heap allocations of one call of f.
func allocsOf(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// SPEC §8 idle CPU and §6 clock: the tick comes when the clock's seconds
// change (whole seconds of the clock), so the clock never shows a second
// late or skips one, and the tick's wake can share the instant with the
// watcher's own whole-second tick. In a synctest bubble the tick fires on
// the fake clock; how far past a whole second the update came decides the
// wait, not a fixed second after it.
func TestTickComesAtTheClocksNextSecond(t *testing.T) {
	for _, past := range []time.Duration{0, 300 * time.Millisecond, 999 * time.Millisecond} {
		t.Run(past.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := New(Options{Initial: exampleSnapshot(), Now: time.Now})
				m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
				time.Sleep(past) // the fake clock starts on a whole second
				start := time.Now()
				_, cmd := m.Update(tickMsg(start))
				if cmd == nil {
					t.Fatal("tick not re-armed")
				}
				msg, ok := cmd().(tickMsg)
				if !ok {
					t.Fatal("not a tickMsg")
				}
				if got, want := time.Time(msg).Sub(start), time.Second-past; got != want {
					t.Errorf("next tick %s after a tick %s past the second, want %s (the next whole second)", got, past, want)
				}
			})
		})
	}
}

// SPEC §8 idle CPU: nothing visible moves while paused (the whole frame is
// frozen), so the tick stops; resuming starts it again, one tick and not a
// second one when the paused tick was still on its way.
func TestPauseStopsTheTick(t *testing.T) {
	now := clock12
	m := New(Options{Initial: exampleSnapshot(), Now: func() time.Time { return now }, Tick: time.Second})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Init()
	press(m, "p")
	if _, cmd := m.Update(tickMsg(now)); cmd != nil {
		t.Error("a tick while paused was re-armed")
	}
	if cmd := press(m, "p"); cmd == nil {
		t.Fatal("resuming did not start the tick again")
	}
	// A pause and a resume within one tick: the tick on its way carries
	// on alone, resuming adds no second one.
	press(m, "p")
	if cmd := press(m, "p"); cmd != nil {
		t.Error("resuming while a tick was on its way started a second one")
	}
	if _, cmd := m.Update(tickMsg(now)); cmd == nil {
		t.Error("the tick on its way was not re-armed after the resume")
	}
}
