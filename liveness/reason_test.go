package liveness

import (
	"testing"
	"time"
	"unsafe"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §3 "re-evaluate ages on a tick": the classifier marks where a
// reason quotes the beat's age, so a view shows it measured at its own now
// (model.Node.ReasonAt) without reading it back out of the text; ages
// measured from anything else, and text an agent wrote, stay as written —
// and a reason quoting such an age says so (ReasonAge.QuotesClock), for the
// live engine's refresh of those (SPEC §8).
func TestReasonBeatAgeMovesWhenShown(t *testing.T) {
	later := now.Add(time.Minute)
	noPidCheck := th
	noPidCheck.NoPidCheck = true
	tests := []struct {
		name       string
		session    func() *model.Node
		id         string
		th         model.Thresholds
		want       string // at the classification
		wantLater  string // a minute later
		wantMoving bool
		wantQuotes bool // another age is quoted as text
	}{
		{name: "last beat", session: func() *model.Node { return beating("s", "running", pidAlive, 10*time.Second) },
			want: "beating; last beat 10s ago", wantLater: "beating; last beat 1m10s ago", wantMoving: true},
		{name: "quiet", session: func() *model.Node { return beating("s", "running", pidAlive, 45*time.Second) },
			want: "beating, quiet: last beat 45s ago", wantLater: "beating, quiet: last beat 1m45s ago", wantMoving: true},
		{name: "stalled: the kill countdown after it is text",
			session: func() *model.Node { return beating("s", "running", pidAlive, 3*time.Minute) },
			want:    "alive but not beating for 3m00s; kill candidate in 2m00s", wantLater: "alive but not beating for 4m00s; kill candidate in 2m00s", wantMoving: true,
			wantQuotes: true},
		{name: "pid gone: the advice after it is text",
			session:   func() *model.Node { return beating("s", "running", pidGone, 3*time.Minute) },
			want:      "pid 4122 gone; last beat 3m00s ago; retries 0/3 in this state, 0/9 in all",
			wantLater: "pid 4122 gone; last beat 4m00s ago; retries 0/3 in this state, 0/9 in all", wantMoving: true},
		{name: "a question quoting an age is the agent's text",
			session: func() *model.Node {
				return beating("s", "running", pidGone, time.Hour, blocked("last beat 3s ago?"))
			},
			want:      "pid 4122 gone; last beat 1h00m ago; waiting for a human: last beat 3s ago?",
			wantLater: "pid 4122 gone; last beat 1h01m ago; waiting for a human: last beat 3s ago?", wantMoving: true},
		{name: "legacy sentinel", session: func() *model.Node { return legacy("s", pidAlive, 3*time.Hour) },
			want: "pid 4121 alive; .running written 3h00m ago", wantLater: "pid 4121 alive; .running written 3h01m ago", wantMoving: true},
		{name: "orphaned: the lead's time is text, the node's own beat moves",
			session: func() *model.Node {
				return adopt(beating("s", "running", pidGone, 3*time.Minute), beating("s/c", "running", pidAlive, 10*time.Second))
			},
			id:        "s/c",
			want:      "lead dead since 11:57:00 (3m00s ago); beating; last beat 10s ago",
			wantLater: "lead dead since 11:57:00 (3m00s ago); beating; last beat 1m10s ago", wantMoving: true, wantQuotes: true},
		{name: "never started: the registry's age is text",
			session: func() *model.Node {
				return adopt(beating("s", "running", pidAlive, 10*time.Second, registryAge(time.Minute)), registered("s/c", "active"))
			},
			id:   "s/c",
			want: "registered but never started (1m00s ago)", wantLater: "registered but never started (1m00s ago)", wantQuotes: true},
		{name: "no pid check: a dead node's beat age moves", th: noPidCheck,
			session:   func() *model.Node { return beating("s", "running", pidAlive, 3*time.Minute) },
			want:      "no beat for 3m00s (pid not checked); retries 0/3 in this state, 0/9 in all",
			wantLater: "no beat for 4m00s (pid not checked); retries 0/3 in this state, 0/9 in all", wantMoving: true},
		{name: "an mtime in the future is text",
			session:   func() *model.Node { return beating("s", "running", pidAlive, -time.Hour) },
			want:      "beating; heartbeat mtime 1h00m in the future (pid 4121 alive)",
			wantLater: "beating; heartbeat mtime 1h00m in the future (pid 4121 alive)", wantQuotes: true},
		{name: "finished", session: func() *model.Node { return beating("s", "completed", pidAlive, time.Hour) },
			want: "completed; ready to merge", wantLater: "completed; ready to merge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.session()
			thresholds := th
			if tt.th != (model.Thresholds{}) {
				thresholds = tt.th
			}
			ClassifyForest([]*model.Node{s}, newFakeProbe(), now, thresholds)
			n := s
			if tt.id != "" {
				n = s.Children[0]
			}
			if n.Reason != tt.want || n.ReasonAt(now) != tt.want {
				t.Errorf("reason %q (shown at once %q), want %q", n.Reason, n.ReasonAt(now), tt.want)
			}
			if got := n.ReasonAt(later); got != tt.wantLater {
				t.Errorf("a minute later %q, want %q", got, tt.wantLater)
			}
			if moving := n.ReasonAge.Len > 0; moving != tt.wantMoving {
				t.Errorf("moving age %+v, want one: %v", n.ReasonAge, tt.wantMoving)
			}
			if n.ReasonAge.QuotesClock != tt.wantQuotes {
				t.Errorf("quotes another age as text: %v, want %v", n.ReasonAge.QuotesClock, tt.wantQuotes)
			}
		})
	}
}

// SPEC §8 memory: nodes whose reasons read the same share one text. A
// fleet crossing a threshold together (every node quiet, or stalled, in
// the same second) renews every node's reason: made anew per node, the
// texts cost a fleet's worth of allocations and as much of the live heap.
// Classifying a node again whose reason's text another node already has
// allocates no text.
func TestNodesOfOneReasonShareItsText(t *testing.T) {
	tests := []struct {
		name string
		age  time.Duration
		want string
	}{
		{"beating", 10 * time.Second, "beating; last beat 10s ago"},
		{"quiet", 45 * time.Second, "beating, quiet: last beat 45s ago"},
		{"stalled", 3 * time.Minute, "alive but not beating for 3m00s; kill candidate in 2m00s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := beating("a", "running", pidAlive, tt.age), beating("b", "running", pidAlive, tt.age)
			probe := newFakeProbe()
			ClassifyForest([]*model.Node{a, b}, probe, now, th)
			if a.Reason != tt.want || b.Reason != tt.want {
				t.Fatalf("reasons %q and %q, want %q", a.Reason, b.Reason, tt.want)
			}
			if unsafe.StringData(a.Reason) != unsafe.StringData(b.Reason) {
				t.Errorf("a and b hold %q in two copies", tt.want)
			}
			c := beating("c", "running", pidAlive, tt.age)
			allocs := testing.AllocsPerRun(20, func() {
				ClassifyNode(c, probe, now, th)
				classifyInTree(c, now, th)
			})
			if c.Reason != tt.want || allocs > 0 {
				t.Errorf("classifying a node whose reason %q another has allocated %.0f times, want none", c.Reason, allocs)
			}
		})
	}
}
