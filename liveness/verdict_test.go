package liveness

// SPEC §3's state and flag tables, row by row, against the verdict alone:
// facts in, state and flags (and the row that decided) out, no probe, no
// clock, no words. A row of the tables changed in verdict.go fails its case
// here; the words each row is given are held by classify_test.go and
// wording_test.go.

import (
	"slices"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// facts is a readable heartbeat with status running and pid 4121, its beat
// age old; opts add the other facts.
func facts(age time.Duration, opts ...func(*beatFacts)) beatFacts {
	f := beatFacts{readable: true, status: model.StatusRunning, pid: pidAlive, mtimeKnown: true, mtime: now.Add(-age), age: age}
	for _, o := range opts {
		o(&f)
	}
	return f
}

// probed is what the probe said of the pid.
func probed(p model.ProcessStatus) func(*beatFacts) {
	return func(f *beatFacts) { f.probed, f.process = true, p }
}

func withStatus(s string) func(*beatFacts) { return func(f *beatFacts) { f.status = s } }
func withPid(pid int) func(*beatFacts)     { return func(f *beatFacts) { f.pid = pid } }
func blockedBy(f *beatFacts)               { f.blocked = true }
func withTraits(tr model.Traits) func(*beatFacts) {
	return func(f *beatFacts) { f.traits = tr }
}
func skewedAhead(f *beatFacts) {
	f.skewed, f.ahead, f.age, f.mtime = true, time.Minute, -time.Minute, now.Add(time.Minute)
}
func ownerWas(p model.ProcessStatus) func(*beatFacts) {
	return func(f *beatFacts) { f.ownerRecorded, f.owner = true, p }
}

func TestVerdictFollowsTheStateAndFlagTables(t *testing.T) {
	const stale, killAfter = 121 * time.Second, 301 * time.Second
	tests := []struct {
		name      string
		facts     beatFacts
		th        model.Thresholds
		wantState model.State
		wantFlags []model.Flag
		wantRow   row
	}{
		// finished
		{name: "finished: status completed", facts: facts(time.Second, withStatus(model.StatusCompleted)),
			wantState: model.StateFinished, wantRow: rowFinished},
		{name: "finished: status withdrawn, whatever the beat, pid and sentinel say",
			facts:     facts(time.Hour, withStatus(model.StatusWithdrawn), probed(model.ProcessGone), blockedBy),
			wantState: model.StateFinished, wantRow: rowFinished},

		// dead
		{name: "dead (a): stale and the pid verified gone", facts: facts(stale, probed(model.ProcessGone)),
			wantState: model.StateDead, wantRow: rowPidGone},
		{name: "dead (a): no pid and a stale mtime", facts: facts(stale, withPid(0)),
			wantState: model.StateDead, wantRow: rowStaleUnchecked},
		{name: "dead (a): --no-pid-check and a stale mtime", facts: facts(stale), th: noPidCheck(),
			wantState: model.StateDead, wantRow: rowStaleUnchecked},
		{name: "dead (a): an unparseable heartbeat with a stale mtime", facts: facts(stale, withPid(0), func(f *beatFacts) { f.readable = false }),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagUnreadable}, wantRow: rowStaleUnchecked},
		{name: "dead (b): pid verified gone past exit-grace, however fresh", facts: facts(6*time.Second, probed(model.ProcessGone)),
			wantState: model.StateDead, wantRow: rowPidGone},
		{name: "dead (b): pid reused (another process's create time)", facts: facts(6*time.Second, probed(model.ProcessReused)),
			wantState: model.StateDead, wantRow: rowPidReused},
		{name: "dead: mtime predates the last boot, pid not verified",
			facts:     facts(stale, probed(model.ProcessUnverified), func(f *beatFacts) { f.boot = now.Add(-time.Second) }),
			wantState: model.StateDead, wantRow: rowPredatesBoot},
		{name: "dead: mtime within start-tolerance of the boot is not before it",
			facts:     facts(stale, probed(model.ProcessUnverified), func(f *beatFacts) { f.boot = f.mtime.Add(time.Second) }),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled, model.FlagPidUnverified}, wantRow: rowStalled},
		{name: "dead: the source saw the process end (§10 Ended), at once", facts: facts(time.Second, func(f *beatFacts) { f.ended = "exited 1" }),
			wantState: model.StateDead, wantRow: rowEnded},
		{name: "dead: ended, the sentinel not stat'ed", facts: facts(0, func(f *beatFacts) { f.ended, f.mtimeKnown = "exited 1", false }),
			wantState: model.StateDead, wantRow: rowEnded},
		{name: "dead: starting past its launch timeout (§10), no pid",
			facts:     facts(61*time.Second, withStatus(model.StatusStarting), withPid(0), withTraits(model.Traits{LaunchTimeout: time.Minute})),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagStarting}, wantRow: rowLaunchTimeout},
		{name: "dead: starting past its launch timeout (§10), pid gone",
			facts:     facts(61*time.Second, withStatus(model.StatusStarting), probed(model.ProcessGone), withTraits(model.Traits{LaunchTimeout: time.Minute, PIDPerTurn: true})),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagStarting}, wantRow: rowLaunchTimeout},
		{name: "dead: a process that could not be looked up, past kill-after (§10 ProcessUnseen)",
			facts:     facts(killAfter, withPid(0), withTraits(model.Traits{ProcessUnseen: true})),
			wantState: model.StateDead, wantRow: rowUnseenDead},
		{name: "dead: a blocked node whose pid is verified gone (§3.1)", facts: facts(stale, probed(model.ProcessGone), blockedBy),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagBlocked}, wantRow: rowPidGone},

		// running
		{name: "running: a fresh beat, the pid not asked", facts: facts(time.Second),
			wantState: model.StateRunning, wantRow: rowRunning},
		{name: "running: the pid alive as the same process past exit-grace", facts: facts(10*time.Second, probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantRow: rowRunning},
		{name: "running: no pid, not yet stale", facts: facts(stale-2*time.Second, withPid(0)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},

		// flags
		{name: "starting: status starting", facts: facts(time.Second, withStatus(model.StatusStarting)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStarting}, wantRow: rowRunning},
		{name: "paused: status paused, judged by its beat and pid like any other (§3.1)", facts: facts(stale, withStatus(model.StatusPaused), probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagPaused, model.FlagStalled}, wantRow: rowStalled},
		{name: "unknown_status: a status of no table", facts: facts(time.Second, withStatus("thinking")),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagUnknownStatus}, wantRow: rowRunning},
		{name: "quiet: older than one beat, not stale", facts: facts(31*time.Second, probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},
		{name: "quiet: a record that needs no beat, past stale (§10), never stalled",
			facts:     facts(time.Hour, probed(model.ProcessAlive), withTraits(model.Traits{BeatNotRequired: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},
		{name: "quiet: a record that needs no beat, past stale, its pid unverified",
			facts:     facts(time.Hour, probed(model.ProcessUnverified), withTraits(model.Traits{BeatNotRequired: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet, model.FlagPidUnverified}, wantRow: rowQuiet},
		{name: "quiet: a record that expects no process, its pid gone, past stale (§10)",
			facts:     facts(time.Hour, probed(model.ProcessGone), withTraits(model.Traits{NoProcessExpected: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},
		{name: "stalled: running, older than stale, the pid alive as the same process", facts: facts(stale, probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled}, wantRow: rowStalled},
		{name: "stalled: a process its source could not look up, until kill-after (§10 ProcessUnseen)",
			facts:     facts(stale, withPid(0), withTraits(model.Traits{ProcessUnseen: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled}, wantRow: rowUnseenStalled},
		{name: "stalled: never by the mtime alone (no pid asked, blocked)", facts: facts(stale, withPid(0), blockedBy),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagBlocked}, wantRow: rowRunning},
		{name: "kill_candidate: stalled for longer than kill-after", facts: facts(killAfter, probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled, model.FlagKillCandidate}, wantRow: rowStalled},
		{name: "kill_candidate: not when blocked", facts: facts(killAfter, probed(model.ProcessAlive), blockedBy),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled, model.FlagBlocked}, wantRow: rowStalled},
		{name: "kill_candidate: not when a human controls it (§10 NeverKill)",
			facts:     facts(killAfter, probed(model.ProcessAlive), withTraits(model.Traits{NeverKill: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled}, wantRow: rowStalled},
		{name: "kill_candidate: not a pid kill never signals (§5.1)",
			facts:     facts(killAfter, probed(model.ProcessAlive), func(f *beatFacts) { f.neverSignalled = true }),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled}, wantRow: rowStalled},
		{name: "kill_candidate: not an unverified pid (§3.1); pid_unverified", facts: facts(killAfter, probed(model.ProcessUnverified)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStalled, model.FlagPidUnverified}, wantRow: rowStalled},
		{name: "pid_unverified: not flagged below stale (§3.1)", facts: facts(31*time.Second, probed(model.ProcessUnverified)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},
		{name: "blocked: a stale beat alone does not make it dead (§3.1)", facts: facts(time.Hour, withPid(0), blockedBy),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagBlocked}, wantRow: rowRunning},
		{name: "idle: a record that says so itself (§10 RecordIdle)", facts: facts(time.Second, withTraits(model.Traits{RecordIdle: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagIdle}, wantRow: rowRunning},
		{name: "idle: a per-turn pid gone, its owner alive",
			facts:     facts(time.Minute, probed(model.ProcessGone), ownerWas(model.ProcessAlive), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagIdle, model.FlagQuiet}, wantRow: rowQuiet},
		{name: "idle: a per-turn pid reused, its owner unverified (taken as alive)",
			facts:     facts(10*time.Second, probed(model.ProcessReused), ownerWas(model.ProcessUnverified), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagIdle}, wantRow: rowRunning},
		{name: "idle: a per-turn pid gone and its owner gone too: dead at once",
			facts:     facts(10*time.Second, probed(model.ProcessGone), ownerWas(model.ProcessGone), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateDead, wantRow: rowOwnerGone},
		{name: "idle: a per-turn pid gone, its owner now another process's: dead at once",
			facts:     facts(10*time.Second, probed(model.ProcessGone), ownerWas(model.ProcessReused), withTraits(model.Traits{PIDPerTurn: true}), blockedBy),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagBlocked}, wantRow: rowOwnerGone},
		{name: "idle: lasts until the beat is stale, then dead",
			facts:     facts(stale, probed(model.ProcessGone), ownerWas(model.ProcessAlive), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateDead, wantRow: rowTurnStale},
		{name: "idle: no owner recorded (--once): running unflagged until stale",
			facts:     facts(time.Minute, probed(model.ProcessGone), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagQuiet}, wantRow: rowQuiet},
		{name: "idle: no owner recorded (--once), stale: dead",
			facts:     facts(stale, probed(model.ProcessGone), withTraits(model.Traits{PIDPerTurn: true})),
			wantState: model.StateDead, wantRow: rowTurnStale},
		{name: "idle: a blocked node is never dead for idleness (§3.1)",
			facts:     facts(time.Hour, probed(model.ProcessGone), ownerWas(model.ProcessAlive), withTraits(model.Traits{PIDPerTurn: true}), blockedBy),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagIdle, model.FlagBlocked}, wantRow: rowRunning},
		{name: "unreadable: a fresh mtime on an unparseable heartbeat is still running", facts: facts(time.Second, withPid(0), func(f *beatFacts) { f.readable = false }),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagUnreadable}, wantRow: rowRunning},
		{name: "unreadable: a sentinel that could not be stat'ed has no mtime: running (§3.1)",
			facts:     facts(0, func(f *beatFacts) { f.mtimeKnown, f.readable = false, false }),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagUnreadable}, wantRow: rowMtimeUnknown},
		{name: "clock_skew: the mtime ahead, the pid alive decides at once", facts: facts(0, skewedAhead, probed(model.ProcessAlive)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagClockSkew}, wantRow: rowSkewed},
		{name: "clock_skew: the mtime ahead, the pid verified gone is dead (no exit grace)", facts: facts(0, skewedAhead, probed(model.ProcessGone)),
			wantState: model.StateDead, wantFlags: []model.Flag{model.FlagClockSkew}, wantRow: rowPidGone},
		{name: "clock_skew: the mtime ahead, the pid unverified", facts: facts(0, skewedAhead, probed(model.ProcessUnverified)),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagClockSkew, model.FlagPidUnverified}, wantRow: rowSkewed},
		{name: "clock_skew: no launch timeout on a skewed mtime",
			facts:     facts(0, skewedAhead, withStatus(model.StatusStarting), withPid(0), withTraits(model.Traits{LaunchTimeout: time.Second})),
			wantState: model.StateRunning, wantFlags: []model.Flag{model.FlagStarting, model.FlagClockSkew}, wantRow: rowSkewed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thr := tt.th
			if thr == (model.Thresholds{}) {
				thr = model.DefaultThresholds()
			}
			f := tt.facts
			v := judgeHeartbeat(&f, thr)
			var want flagSet
			for _, fl := range tt.wantFlags {
				want.add(fl)
			}
			if v.state != tt.wantState || v.flags != want || v.row != tt.wantRow {
				t.Errorf("verdict = %s %v row %d, want %s %v row %d", v.state, v.flags.build(0), v.row, tt.wantState, want.build(0), tt.wantRow)
			}
		})
	}
}

// The facts gathered for the verdict ask the probe only where the tables
// make the pid decisive: never for a fresh beat, a finished node, one
// whose source saw it end, or one judged by its mtime alone.
func TestHeartbeatFactsAskTheProbeOnlyWhenThePidDecides(t *testing.T) {
	tests := []struct {
		name string
		node *model.Node
		th   model.Thresholds
		want []int
	}{
		{"a fresh beat", beating("a", "running", pidGone, time.Second), th, nil},
		{"finished", beating("a", "completed", pidGone, time.Hour), th, nil},
		{"no pid", beating("a", "running", 0, time.Hour), th, nil},
		{"--no-pid-check", beating("a", "running", pidGone, time.Hour), noPidCheck(), nil},
		{"past exit grace", beating("a", "running", pidGone, 6*time.Second), th, []int{pidGone}},
		{"a per-turn pid gone, its owner recorded", beating("a", "running", pidGone, 6*time.Second, func(n *model.Node) {
			n.Traits.PIDPerTurn = true
			n.Owner = &model.Owner{PID: pidAlive, Started: started}
		}), th, []int{pidGone, pidAlive}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newFakeProbe()
			f := heartbeatFacts(tt.node, p, now, tt.th)
			if got := p.askedAbout(); !slices.Equal(got, tt.want) {
				t.Errorf("asked about %v, want %v", got, tt.want)
			}
			if f.probed != (len(tt.want) > 0) {
				t.Errorf("probed = %v with %v asked", f.probed, tt.want)
			}
		})
	}
}
