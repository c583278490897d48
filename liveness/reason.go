package liveness

import (
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// FormatAge renders a duration compactly for reasons, the tree and the text
// output: "12s", "3m12s", "2h5m", "3d4h". It truncates to whole units; a
// negative duration (an mtime in the future, clock skew) renders as "0s".
func FormatAge(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + strconv.FormatInt(s%60, 10) + "s"
	case s < 86400:
		return strconv.FormatInt(s/3600, 10) + "h" + strconv.FormatInt(s%3600/60, 10) + "m"
	}
	return strconv.FormatInt(s/86400, 10) + "d" + strconv.FormatInt(s%86400/3600, 10) + "h"
}

// clock renders a wall time the way the reasons name it: "11:58:30" in the
// location of now, with the date when it is another day.
func clock(t, now time.Time) string {
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

func lastBeat(age time.Duration) string {
	return "last beat " + FormatAge(age) + " ago"
}

func waitingForHuman(b *model.Blocked) string {
	q := ""
	if b != nil {
		q = termtext.OneLine(b.Question, maxQuestion)
	}
	if q == "" {
		return "waiting for a human (no question given)"
	}
	return "waiting for a human: " + q
}

// maxQuestion caps the question quoted in a reason; the detail pane shows it
// whole.
const maxQuestion = 200

// maxID caps a node id named in a reason (a directory name may hold anything).
const maxID = 512

// inTheFuture is the reason's word on an mtime ahead of now (clock_skew):
// never "0s ago", which would hide that the age means nothing.
func inTheFuture(file string, ahead time.Duration) string {
	return file + " mtime " + FormatAge(ahead) + " in the future"
}

func reasonPidGone(pid int, beat string) string {
	return "pid " + strconv.Itoa(pid) + " gone; " + beat
}

func reasonPidReused(pid int, beat string) string {
	return "pid " + strconv.Itoa(pid) + " now belongs to another process; " + beat
}

func stalledFor(pid int, age time.Duration, unverified bool, why error) string {
	r := "alive but not beating for " + FormatAge(age)
	if unverified {
		r += " (" + unverifiedPid(pid, why) + ")"
	}
	return r
}

// unverifiedPid names a pid that could not be verified and, when the
// heartbeat's started is to blame, why.
func unverifiedPid(pid int, why error) string {
	r := "pid " + strconv.Itoa(pid) + " unverified"
	if why != nil {
		r += ": " + termtext.OneLine(why.Error(), maxQuestion)
	}
	return r
}

// retrySummary says where the node stands against both budgets:
// "retries 1/3 in EXECUTE, 4/9 in all".
func retrySummary(n *model.Node) string {
	phase, _ := RetriesLeft(n)
	state := "this state"
	if n.Cfa != nil && n.Cfa.State != "" {
		state = n.Cfa.State
	}
	return "retries " + strconv.Itoa(phase) + "/" + strconv.Itoa(model.RetriesPerState) + " in " + termtext.OneLine(state, maxID) +
		", " + strconv.Itoa(max(n.Retries.Total, 0)) + "/" + strconv.Itoa(model.RetriesPerNode) + " in all"
}
