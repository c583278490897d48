package liveness

import (
	"strconv"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// reason is a reason being built: its text, and where in it the beat's
// age is, which moves with the clock (model.ReasonAge). Build one with
// plainReason or beatAge, then add to it with prefixed and appended, which
// keep the age's place.
type reason struct {
	text string
	age  model.ReasonAge
}

// plainReason is text with no moving age.
func plainReason(text string) reason { return reason{text: text} }

// beatAge is before + the age of the beat mtime at now + after; the age
// moves with the clock.
func beatAge(before string, mtime, now time.Time, after string) reason {
	return ledBeatAge("", before, mtime, now, after)
}

// ledBeatAge is beatAge with lead before it: one text made, where
// beatAge(...).prefixed(lead) makes two.
func ledBeatAge(lead, before string, mtime, now time.Time, after string) reason {
	var buf [16]byte
	age := model.AppendAge(buf[:0], now.Sub(mtime))
	return reason{text: reasonTexts.join(lead, before, string(age), after),
		age: model.ReasonAge{Since: model.InstantOf(mtime), At: int32(len(lead) + len(before)), Len: int32(len(age))}}
}

// quotingTheClock marks r as quoting an age in plain text
// (model.ReasonAge.QuotesClock): every text that writes an age other than
// the beat's moving one goes through it.
func (r reason) quotingTheClock() reason {
	r.age.QuotesClock = true
	return r
}

func (r reason) prefixed(s string) reason {
	if s == "" {
		return r
	}
	if r.age.Len > 0 {
		r.age.At += int32(len(s))
	}
	r.text = reasonTexts.join(s, r.text)
	return r
}

func (r reason) appended(s string) reason {
	if s != "" {
		r.text = reasonTexts.join(r.text, s)
	}
	return r
}

// appendedReason appends sep and o. A moving age of o's cannot move here
// (a reason has one, r's place), so it counts as the clock quoted.
func (r reason) appendedReason(sep string, o reason) reason {
	r.text = reasonTexts.join(r.text, sep, o.text)
	if o.age.QuotesClock || o.age.Len > 0 {
		r.age.QuotesClock = true
	}
	return r
}

// killCandidateIn is the countdown of a stalled node: "kill candidate in
// 1m30s", plain text that holds as of the classification.
func killCandidateIn(d time.Duration) reason {
	var buf [16]byte
	return plainReason(reasonTexts.join("kill candidate in ", string(model.AppendAge(buf[:0], d)))).quotingTheClock()
}

// deadIn is the countdown of a stalled node whose process could not be
// looked up (Traits.ProcessUnseen): "no pid to kill; dead past kill-after,
// in 7m00s", plain text that holds as of the classification.
func deadIn(d time.Duration) reason {
	var buf [16]byte
	return plainReason(reasonTexts.join("no pid to kill; dead past kill-after, in ", string(model.AppendAge(buf[:0], d)))).quotingTheClock()
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

// lastBeat is lead + "last beat 12s ago", in the words of the node's
// sign of life ("last activity 12s ago", "started 12s ago").
func lastBeat(lead string, sign *signWords, mtime, now time.Time) reason {
	return ledBeatAge(lead, sign.ago, mtime, now, " ago")
}

// signWords are what the reasons say of a node's sign of life
// (model.Traits.SignOfLife). "beating" is said of a beat alone: a record
// whose sign is a stream's write, a state file's, a start time, runs, it
// does not beat.
type signWords struct {
	running    string // the word of the status running
	unreadable string // the record could not be read
	ago        string // before its age: "last beat 12s ago"
	none       string // before its age when it is too old: "no beat for 3m00s"
	noneAfter  string // after that age
	stalled    string // before its age, the pid alive: "alive but not beating for 3m00s"
	stale      string // it, being stale: "dead once the beat is stale"
	future     string // before how far ahead it is: "heartbeat mtime 1m00s in the future"
	// noSign: its age is no sign of death (Traits.BeatNotRequired)
	noSign string
	// noun names its time: "heartbeat predates the last boot"
	noun string
}

// signs are the words of each sign of life.
var signs = [...]signWords{
	model.SignBeat: {running: "beating", unreadable: "heartbeat unreadable", ago: "last beat ", none: "no beat for ",
		stalled: "alive but not beating for ", stale: "the beat", future: "heartbeat mtime ", noSign: "no beat required", noun: "heartbeat"},
	model.SignActivity: {running: "running", unreadable: "record unreadable", ago: "last activity ", none: "no activity for ",
		stalled: "alive but no activity for ", stale: "the last activity", future: "last activity ", noSign: "its age says nothing", noun: "its last activity"},
	model.SignUpdate: {running: "running", unreadable: "record unreadable", ago: "last update ", none: "no update for ",
		stalled: "alive but no update for ", stale: "the last update", future: "last update ", noSign: "its age says nothing", noun: "its last update"},
	model.SignStart: {running: "running", unreadable: "record unreadable", ago: "started ", none: "started ", noneAfter: " ago",
		stalled: "alive, started ", stale: "the start", future: "start ", noSign: "its age says nothing", noun: "its start"},
}

// signOf is the words of n's sign of life; a beat's for a value no
// source gives.
func signOf(n *model.Node) *signWords {
	if s := n.Traits.SignOfLife; int(s) < len(signs) {
		return &signs[s]
	}
	return &signs[model.SignBeat]
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
// never "0s ago", which would hide that the age means nothing. what names
// the time: "heartbeat mtime ", "last activity ".
func inTheFuture(what string, ahead time.Duration) string {
	return what + model.FormatAge(ahead) + " in the future"
}

// pidGoneLead and pidReusedLead lead the beat's word (see classifyHeartbeat) on a
// dead node.
func pidGoneLead(pid int) string { return "pid " + strconv.Itoa(pid) + " gone; " }

func pidReusedLead(pid int) string {
	return "pid " + strconv.Itoa(pid) + " now belongs to another process; "
}

// pidEnded says what became of a pid found not to be its process any more:
// "pid 4122 gone", or, when a live process holds it now (`ps 4122` shows
// one), "pid 4122 now belongs to another process".
func pidEnded(pid int, p model.ProcessStatus) string {
	return "pid " + strconv.Itoa(pid) + " " + endedWord(p)
}

// launchTimeout is the reason of a starting record past its launch
// timeout (Traits.LaunchTimeout): "launch timed out: starting for 1m01s
// (launch timeout 1m00s)", the first age moving with the clock.
func launchTimeout(mtime, now time.Time, timeout time.Duration) reason {
	return beatAge("launch timed out: starting for ", mtime, now, " (launch timeout "+model.FormatAge(timeout)+")")
}

func stalledFor(pid int, sign *signWords, mtime, now time.Time, unverified bool, why error) reason {
	after := sign.noneAfter
	if unverified {
		after += " (" + unverifiedPid(pid, why) + ")"
	}
	return beatAge(sign.stalled, mtime, now, after)
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
