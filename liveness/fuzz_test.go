package liveness

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// FuzzClassify feeds arbitrary facts to a parent and a child and checks the
// invariants that tie SPEC §3's tables together, whatever the input (SPEC
// §9: bad input never crashes).
func FuzzClassify(f *testing.F) {
	// status, pid choice, beat age (s), blocked, cfa state, retries total,
	// per state, scan flag bits, no-pid-check, parent status, parent pid, parent age,
	// registry age (s), question
	f.Add("running", uint8(0), int64(3), false, "EXECUTE", 0, 0, uint8(0), false, "running", uint8(0), int64(1), int64(600), "")
	f.Add("running", uint8(1), int64(400), true, "DONE", 9, 3, uint8(7), false, "completed", uint8(1), int64(90), int64(0), "go?\n")
	f.Add("sleeping", uint8(3), int64(-5), false, "", -1, 99, uint8(255), true, "", uint8(5), int64(1<<40), int64(-1), "\x1b[2J")
	f.Add("", uint8(2), int64(0), true, "WITHDRAWN", 2, 1, uint8(1), false, "withdrawn", uint8(2), int64(130), int64(7200), "q")
	f.Fuzz(func(t *testing.T, status string, pidChoice uint8, ageSec int64, isBlocked bool, cfaState string,
		total, perState int, scanBits uint8, noPid bool, parentStatus string, parentPid uint8, parentAgeSec int64,
		registryAgeSec int64, question string) {
		pids := []int{pidAlive, pidGone, pidReused, pidUnverified, 0, -3}
		parent := node("p", parentStatus, pids[int(parentPid)%len(pids)], parentAgeSec)
		child := node("p/c/1", status, pids[int(pidChoice)%len(pids)], ageSec)
		if isBlocked {
			child.Blocked = &model.Blocked{Question: question}
		}
		if cfaState != "" {
			child.Cfa = &model.CfaState{State: cfaState}
		}
		child.Retries = model.RetryCount{Total: total, ByPhase: map[string]int{cfaState: perState}}
		for i, fl := range []model.Flag{model.FlagConflict, model.FlagCycle, model.FlagOutsideRoot, model.FlagUnreadable} {
			if scanBits&(1<<i) != 0 {
				child.EditRare(func(r *model.Rare) { r.ScanFlags = append(r.ScanFlags, fl) })
			}
		}
		// The high bits give the child a source's traits (SPEC §10).
		tr := &child.Traits
		tr.PIDPerTurn = scanBits&(1<<4) != 0
		tr.NoProcessExpected = scanBits&(1<<5) != 0
		tr.NeverKill, tr.MergesItself = scanBits&(1<<6) != 0, scanBits&(1<<6) != 0
		tr.BeatNotRequired = scanBits&(1<<7) != 0
		if tr.BeatNotRequired {
			tr.LaunchTimeout, tr.StartSlack = time.Minute, 2*time.Minute
		}
		if tr.PIDPerTurn && total%2 == 0 {
			child.Owner = &model.Owner{PID: pids[int(parentPid)%len(pids)], Started: started}
		}
		if registryAgeSec != 0 {
			parent.SetRegistry(parent.RegistryLines(), now.Add(-time.Duration(registryAgeSec)*time.Second), parent.RegistrySize())
		}
		adopt(parent, child, registered("p/d/2", "active"))

		thr := model.DefaultThresholds()
		thr.NoPidCheck = noPid
		probe := newFakeProbe()
		ClassifyForest([]*model.Node{parent}, probe, now, thr)

		if noPid && len(probe.askedAbout()) > 0 {
			t.Errorf("--no-pid-check asked the probe about %v", probe.askedAbout())
		}
		parent.Walk(func(n *model.Node) { checkInvariants(t, n) })
	})
}

// zeroAge finds an age of "0s ago" in a reason, not the tail of another
// age ("lead dead since 11:57:50 (2m10s ago)" is the parent's, and fine).
var zeroAge = regexp.MustCompile(`(^|[^0-9a-z])0s ago`)

// node builds a fuzzed node: an empty status means an unreadable heartbeat.
func node(id, status string, pid int, ageSec int64) *model.Node {
	n := beating(id, status, pid, time.Duration(ageSec)*time.Second)
	if ageSec > 1<<33 || ageSec < -(1<<33) {
		n.BeatMtime = time.Time{} // no mtime, as for a file that could not be opened
	}
	if status == "" {
		n.Heartbeat = nil
	}
	return n
}

func checkInvariants(t *testing.T, n *model.Node) {
	t.Helper()
	if !slices.Contains(model.States, n.State) {
		t.Fatalf("%s: state %q", n.ID, n.State)
	}
	known := []model.Action{model.ActionNone, model.ActionWait, model.ActionAnswer, model.ActionKill,
		model.ActionResume, model.ActionMerge, model.ActionSurface, model.ActionCompact}
	if !slices.Contains(known, n.Action) {
		t.Fatalf("%s: action %q", n.ID, n.Action)
	}
	if n.Reason == "" || strings.ContainsAny(n.Reason, "\n\r\x1b") {
		t.Errorf("%s: reason %q is not one clean line", n.ID, n.Reason)
	}
	last := -1
	for _, fl := range n.Flags {
		i := slices.Index(model.Flags, fl)
		if i <= last {
			t.Errorf("%s: flags %v not deduplicated in model.Flags order", n.ID, n.Flags)
		}
		last = i
	}
	has := n.HasFlag
	running := n.State == model.StateRunning
	switch {
	case has(model.FlagKillCandidate) && (!has(model.FlagStalled) || has(model.FlagBlocked)):
		t.Errorf("%s: kill_candidate without stalled or with blocked: %v", n.ID, n.Flags)
	case (has(model.FlagStalled) || has(model.FlagQuiet) || has(model.FlagOrphaned)) && !running:
		t.Errorf("%s: %s with %v", n.ID, n.State, n.Flags)
	case has(model.FlagStalled) && has(model.FlagQuiet):
		t.Errorf("%s: both stalled and quiet", n.ID)
	case has(model.FlagBlocked) && n.State == model.StateFinished:
		t.Errorf("%s: a finished node flagged blocked", n.ID)
	case has(model.FlagOutsideRoot) && n.Action != model.ActionNone:
		t.Errorf("%s: outside_root but action %s", n.ID, n.Action)
	case has(model.FlagBlocked) && !has(model.FlagOutsideRoot) && n.Action != model.ActionAnswer:
		t.Errorf("%s: blocked but action %s", n.ID, n.Action)
	case has(model.FlagKillCandidate) && has(model.FlagPidUnverified):
		t.Errorf("%s: a kill candidate whose pid cannot be verified: %v", n.ID, n.Flags)
	case has(model.FlagClockSkew) && (has(model.FlagQuiet) || has(model.FlagStalled)):
		t.Errorf("%s: an mtime in the future has no age, yet %v", n.ID, n.Flags)
	case has(model.FlagClockSkew) && zeroAge.MatchString(n.Reason):
		t.Errorf("%s: clock_skew, yet the reason says %q", n.ID, n.Reason)
	case n.Action == model.ActionKill && !has(model.FlagKillCandidate):
		t.Errorf("%s: kill without kill_candidate", n.ID)
	case n.Action == model.ActionResume && n.State != model.StateDead:
		t.Errorf("%s: resume on a %s node", n.ID, n.State)
	case n.Action == model.ActionResume && n.Parent != nil && n.Parent.State == model.StateDead:
		t.Errorf("%s: resume under a dead parent (it belongs on the topmost)", n.ID)
	case n.State == model.StateMissing && n.Action != model.ActionWait:
		t.Errorf("%s: missing with action %s", n.ID, n.Action)
	case has(model.FlagOrphaned) && (n.Parent == nil || !n.OrphanedSince().Equal(n.Parent.BeatMtime)):
		t.Errorf("%s: orphaned since %v, not its parent's last beat", n.ID, n.OrphanedSince())
	case !has(model.FlagOrphaned) && !n.OrphanedSince().IsZero():
		t.Errorf("%s: orphaned since %v without the flag", n.ID, n.OrphanedSince())
	case has(model.FlagIdle) && (!running || (!n.Traits.PIDPerTurn || n.RecordedOwner().PID <= 0) && !n.Traits.RecordIdle):
		t.Errorf("%s: idle, yet %s, traits %+v, owner %+v", n.ID, n.State, n.Traits, n.RecordedOwner())
	case n.Traits.NeverKill && (has(model.FlagKillCandidate) || n.Action == model.ActionKill):
		t.Errorf("%s: a human controls it, yet %v, action %s", n.ID, n.Flags, n.Action)
	case n.Traits.MergesItself && n.Action == model.ActionMerge:
		t.Errorf("%s: its source merges by itself, yet merge", n.ID)
	case (n.Traits.BeatNotRequired || n.Traits.NoProcessExpected) && has(model.FlagStalled):
		t.Errorf("%s: stalled, though its source needs no beat: %+v", n.ID, n.Traits)
	case n.Traits.NoProcessExpected && n.State == model.StateDead && n.Process != model.ProcessNotProbed &&
		n.Process != model.ProcessAlive && n.Process != model.ProcessUnverified:
		t.Errorf("%s: no process expected, yet dead for pid %s (%s)", n.ID, n.Process, n.Reason)
	}
	if _, left := RetriesLeft(n); left < 0 || left > model.RetriesPerState {
		t.Errorf("%s: %d retries left", n.ID, left)
	}
}

// FuzzVerify feeds Verify every started a float64 can hold (NaN, ±Inf,
// milliseconds, 1e300) against create, boot and now times far apart, and
// checks its verdict against exact arithmetic: the same process only within
// tolerance of a plausible started, another process only outside it, and an
// unverified pid blamed on started names the value. No overflow can make
// two times 292 years apart "within tolerance", and a start slack (created
// up to that long before started) widens the window on that side only.
func FuzzVerify(f *testing.F) {
	// started, create time (ms since the epoch), boot and now (s), tolerance (ms), slack (ms), exists, create time readable
	at := started.UnixMilli()
	f.Add(1.7e12, at, now.Unix()-86400, now.Unix(), int64(2000), int64(0), true, true)
	f.Add(1e10, at, now.Unix()-86400, now.Unix(), int64(2000), int64(0), true, true)
	f.Add(1e18, at, int64(0), now.Unix(), int64(2000), int64(0), true, true)
	f.Add(float64(at)/1000, at, now.Unix()-86400, now.Unix(), int64(2000), int64(0), true, true)
	f.Add(float64(at)/1000+2, at, now.Unix()-86400, now.Unix(), int64(2000), int64(0), true, false)
	f.Add(float64(at)/1000+100, at, now.Unix()-86400, now.Unix(), int64(2000), int64(120_000), true, true)
	f.Add(float64(at)/1000-100, at, now.Unix()-86400, now.Unix(), int64(2000), int64(120_000), true, true)
	f.Add(-1.0, int64(math.MinInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), true, true)
	f.Add(math.Inf(1), at, int64(0), int64(1)<<62, int64(0), int64(math.MinInt64), false, true)
	f.Fuzz(func(t *testing.T, startedSec float64, createMs, bootSec, nowSec, tolMs, slackMs int64, exists, readable bool) {
		tol := time.Duration(tolMs%(1<<40)) * time.Millisecond
		if tol < 0 {
			tol = -tol
		}
		// Any slack, up to the largest Duration, and negative (none).
		slack := time.Duration(slackMs)
		if slackMs%2 == 0 {
			slack = time.Duration(slackMs%(1<<40)) * time.Millisecond
		}
		create := time.UnixMilli(createMs)
		info := ProcessInfo{Exists: exists, CreateTime: create}
		if !readable {
			info = ProcessInfo{Exists: exists, CreateTimeErr: errors.New("permission denied")}
		}
		boot, at := time.Time{}, time.Unix(nowSec, 0)
		if bootSec != 0 {
			boot = time.Unix(bootSec, 0)
		}
		got, why := VerifyWithin(info, startedSec, slack, tol, boot, at)
		if why != nil && (got != model.ProcessUnverified || !strings.Contains(why.Error(), formatStarted(startedSec))) {
			t.Fatalf("Verify = %s, %v: a started to blame leaves the pid unverified and names %v", got, why, startedSec)
		}
		if (got == model.ProcessGone) != !exists {
			t.Fatalf("Verify = %s for exists=%v", got, exists)
		}
		if got != model.ProcessAlive && got != model.ProcessReused {
			return
		}
		// Compared: so started was a finite time within the window, and
		// the verdict matches the exact distance (started converted to
		// whole nanoseconds, so within a nanosecond of it).
		if math.IsNaN(startedSec) || math.IsInf(startedSec, 0) || startedSec == 0 || !readable {
			t.Fatalf("Verify = %s for started %v, readable %v", got, startedSec, readable)
		}
		s := new(big.Float).SetPrec(200).SetFloat64(startedSec)
		margin := new(big.Float).SetPrec(200).SetFloat64(tol.Seconds() + 1e-6)
		if s.Cmp(new(big.Float).Add(exactSeconds(at), margin)) > 0 {
			t.Fatalf("Verify = %s for started %v after now %v", got, startedSec, at)
		}
		if !boot.IsZero() && s.Cmp(new(big.Float).Sub(exactSeconds(boot), margin)) < 0 {
			t.Fatalf("Verify = %s for started %v before the boot %v", got, startedSec, boot)
		}
		// dist is create − started: the window is [−(slack + tol), tol].
		dist := new(big.Float).Sub(exactSeconds(create), s)
		ns := new(big.Float).SetPrec(200).SetFloat64(1e-9)
		tolSec := new(big.Float).SetPrec(200).SetFloat64(float64(tol) / 1e9)
		early := new(big.Float).SetPrec(200).SetFloat64(float64(max(slack, 0)) / 1e9)
		early.Add(early, tolSec)
		early.Neg(early)
		switch got {
		case model.ProcessAlive:
			if dist.Cmp(new(big.Float).Add(tolSec, ns)) > 0 || dist.Cmp(new(big.Float).Sub(early, ns)) < 0 {
				t.Fatalf("alive: create %v is %v s after started %v, window [%v, %v] s", create, dist, startedSec, early, tolSec)
			}
		case model.ProcessReused:
			if dist.Cmp(new(big.Float).Sub(tolSec, ns)) < 0 && dist.Cmp(new(big.Float).Add(early, ns)) > 0 {
				t.Fatalf("reused: create %v is %v s after started %v, within window [%v, %v] s", create, dist, startedSec, early, tolSec)
			}
		}
	})
}

// exactSeconds is t's seconds since the epoch, exactly.
func exactSeconds(t time.Time) *big.Float {
	s := new(big.Float).SetPrec(200).SetInt64(t.Unix())
	return s.Add(s, new(big.Float).SetPrec(200).SetFloat64(float64(t.Nanosecond())/1e9))
}

// FuzzTimeDistance checks the distance helper against exact arithmetic for
// times up to 2^62 s apart: never negative, symmetric, zero only for equal
// times, exact while it fits a Duration and saturated (from within a second
// of it, as time.Time.Sub saturates) beyond.
func FuzzTimeDistance(f *testing.F) {
	f.Add(int64(1_700_000_000), int64(0), int64(1_700_000_000_000), int64(0))
	f.Add(int64(0), int64(0), int64(9_223_372_036), int64(854_775_807))
	f.Add(int64(0), int64(0), int64(-9_223_372_037), int64(0))
	f.Add(int64(1<<62), int64(999_999_999), int64(-(1 << 62)), int64(0))
	f.Add(int64(5), int64(1), int64(5), int64(1))
	f.Fuzz(func(t *testing.T, aSec, aNs, bSec, bNs int64) {
		const limit = 1 << 62
		aSec, bSec = aSec%limit, bSec%limit
		aNs, bNs = absInt64(aNs%1e9), absInt64(bNs%1e9)
		a, b := time.Unix(aSec, aNs), time.Unix(bSec, bNs)
		d := TimeDistance(a, b)
		if d < 0 || d != TimeDistance(b, a) || (d == 0) != a.Equal(b) {
			t.Fatalf("TimeDistance(%v, %v) = %v, reversed %v", a, b, d, TimeDistance(b, a))
		}
		exact := new(big.Int).Mul(big.NewInt(aSec-bSec), big.NewInt(1e9))
		exact.Add(exact, big.NewInt(aNs-bNs))
		exact.Abs(exact)
		maxD := big.NewInt(math.MaxInt64)
		switch {
		case d == math.MaxInt64:
			if exact.Cmp(new(big.Int).Sub(maxD, big.NewInt(1e9))) < 0 {
				t.Fatalf("TimeDistance(%v, %v) saturated, exact %v ns", a, b, exact)
			}
		case exact.Cmp(big.NewInt(int64(d))) != 0:
			t.Fatalf("TimeDistance(%v, %v) = %d ns, exact %v ns", a, b, int64(d), exact)
		}
	})
}

func absInt64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
