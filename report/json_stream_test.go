package report

// The streaming writers (json_stream.go) against the reference
// (json_reference.go): byte for byte, on the fixtures, on random forests,
// and under fuzzing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// assertStreamedIsReference fails t unless WriteJSON of snap, and
// EncodeDocument of its document, write MarshalDocument's bytes.
func assertStreamedIsReference(t *testing.T, snap *model.Snapshot) {
	t.Helper()
	doc := BuildDocument(snap)
	want, err := MarshalDocument(doc)
	if err != nil {
		t.Fatalf("MarshalDocument: %v", err)
	}
	var streamed, encoded bytes.Buffer
	if err := WriteJSON(&streamed, snap); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if err := EncodeDocument(&encoded, doc); err != nil {
		t.Fatalf("EncodeDocument: %v", err)
	}
	for _, got := range []struct {
		name string
		b    []byte
	}{{"WriteJSON", streamed.Bytes()}, {"EncodeDocument", encoded.Bytes()}} {
		if !bytes.Equal(got.b, want) {
			at := firstDifference(got.b, want)
			t.Fatalf("%s differs from the reference at byte %d:\n got %q\nwant %q", got.name, at, around(got.b, at), around(want, at))
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, at int) []byte { return b[max(at-60, 0):min(at+60, len(b))] }

// The document is written a session at a time; its bytes must be the
// reference's (MarshalDocument: json.MarshalIndent of the whole document),
// for every shape of it, by both streaming writers.
func TestJSONStreamedIsTheReferenceByteForByte(t *testing.T) {
	// Several encoders, on any machine: their parts must come in order.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	withSecond := sampleSnapshot()
	second := &model.Node{ID: "B<&>", Root: "/r", InfraDir: "/r/B<&>", State: model.StateDead,
		Reason: "pid 7 gone", Action: model.ActionResume}
	withSecond.Sessions = append(withSecond.Sessions, second)
	withSecond.Problems = []model.Problem{{Path: "/r/B<&>/.children", Error: "line 3: not JSON"}}
	empty := &model.Snapshot{GeneratedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		Thresholds: model.DefaultThresholds()}
	// Every kind of value a node holds, in the shapes that encode
	// differently: escapes, invalid UTF-8, line separators, floats that
	// switch to exponents, nested and empty extra fields, node problems.
	odd := sampleSnapshot()
	lead := odd.Sessions[0]
	lead.ID = "A\"\\\b\f\n\r\t\x01\x1f<>&\u2028\u2029\xff\xc3é✓"
	lead.Heartbeat.Started = 1e21
	lead.Heartbeat.Role = "\x7f\u0085"
	lead.Heartbeat.SetOptional(model.HeartbeatOptional{TaskID: "t-1", Extra: map[string]json.RawMessage{
		"z": json.RawMessage(`{"nested": [1, {"a": []}, {}], "s": "<x>"}`),
		"a": json.RawMessage(`[ ]`), "m": json.RawMessage(`1.5e-7`),
	}})
	lead.ActivityMtime = lead.BeatMtime.Add(-time.Nanosecond * 123456789)
	lead.Flags = []model.Flag{model.FlagStalled, model.FlagOrphaned}
	lead.EditRare(func(r *model.Rare) {
		r.Problems = []model.Problem{{Path: "/r/A/.cfa-state.json", Error: "parse CfA state: <bad>"}}
		r.OtherParents = []string{"B", "C"}
	})
	lead.Blocked = &model.Blocked{Question: "which one?\n"}
	lead.Heartbeat.PID = -3
	tiny := &model.Node{ID: "T", Root: "/r", InfraDir: "/r/T", HasHeartbeat: true, HeartbeatPath: "/r/T/.heartbeat",
		Heartbeat: &model.Heartbeat{Started: 1e-7, PID: 12}, BeatMtime: odd.GeneratedAt.Add(time.Hour)}
	tiny.EditRare(func(r *model.Rare) { r.HeartbeatRaw = []byte(`{"status": null}`) })
	odd.Sessions = append(odd.Sessions, tiny)
	tests := []struct {
		name string
		snap *model.Snapshot
	}{
		{"one session with a child", sampleSnapshot()},
		{"two sessions, problems, HTML-escaped characters", withSecond},
		{"no roots, no sessions, no problems", empty},
		{"escapes, exponents, extra fields, node problems", odd},
		{"a hundred sessions, written a chunk an encoder", forestOf(100)},
		{"a session larger than a spill, written in parts", sessionOf(3000)},
		{"sessions larger than a spill, each encoder's in parts", largeSessions(9, 1500)},
		{"lone nodes, many to a chunk", loneNodesOf(1000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertStreamedIsReference(t, tt.snap)
		})
	}
}

// Sessions are handed to an encoder in chunks of at least chunkNodes
// nodes, a session larger than that a chunk of its own, the last chunk
// whatever is left.
func TestChunksHoldSessionsUntilTheyHoldChunkNodes(t *testing.T) {
	const c = chunkNodes
	tests := []struct {
		name  string
		nodes []int
		want  []int
	}{
		{"one session", []int{1}, []int{0, 1}},
		{"lone nodes, chunkNodes to a chunk", slicesOf(2*c+1, 1), []int{0, c, 2 * c, 2*c + 1}},
		{"a session of chunkNodes alone", []int{c, 1, 1}, []int{0, 1, 3}},
		{"a large session among small ones", []int{1, 1, 10 * c, 3, 3}, []int{0, 3, 5}},
		{"the last chunk holds what is left", []int{c - 1, 1, c - 1}, []int{0, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chunkStarts(len(tt.nodes), func(i int) int { return tt.nodes[i] })
			if !slices.Equal(got, tt.want) {
				t.Errorf("chunkStarts of %v = %v, want %v", tt.nodes, got, tt.want)
			}
		})
	}
}

func slicesOf(n, v int) []int { return slices.Repeat([]int{v}, n) }

// Random forests, every value a node shows drawn at random (strings of the
// characters that escape differently, floats that switch to exponents,
// absent and present optional values, shapes from a lone session to
// sessions deeper and wider than a chunk), with one encoder and with
// several: the streamed bytes are the reference's.
func TestJSONStreamedMatchesTheReferenceOnRandomForests(t *testing.T) {
	for _, procs := range []int{1, 4} {
		for seed := range uint64(25) {
			t.Run(fmt.Sprintf("GOMAXPROCS=%d/seed=%d", procs, seed), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				assertStreamedIsReference(t, randomForest(rand.New(rand.NewPCG(seed, 29))))
			})
		}
	}
}

// FuzzJSONStreamedMatchesTheReference puts the fuzzer's strings and
// numbers where a node's own words and values go.
func FuzzJSONStreamedMatchesTheReference(f *testing.F) {
	f.Add("A", "beating", "lead", "which one?", 4121, 1700000000.5, int64(10e9))
	f.Add("A\"\\\b\f\n\r\t\x01<>&\u2028\u2029\xff", "\x7f\u0085", "\xc3", "", -3, 1e21, int64(-5e9))
	f.Add("", "", "", "\x00", 0, 1.5e-7, int64(0))
	f.Fuzz(func(t *testing.T, id, reason, role, question string, pid int, started float64, ageNs int64) {
		snap := sampleSnapshot()
		lead := snap.Sessions[0]
		lead.ID, lead.Reason, lead.Heartbeat.Role, lead.Heartbeat.PID, lead.Heartbeat.Started = id, reason, role, pid, started
		lead.Blocked = &model.Blocked{Question: question}
		lead.BeatMtime = snap.GeneratedAt.Add(-time.Duration(ageNs))
		lead.Children[0].ParentID = id
		lead.EditRare(func(r *model.Rare) {
			r.SourceFields = []model.Field{{Name: question, Value: reason}}
			r.Problems = []model.Problem{{Path: id, Error: reason}}
		})
		assertStreamedIsReference(t, snap)
	})
}

// tricky are the pieces random strings are made of: each escapes (or
// does not) its own way in JSON.
var tricky = []string{"a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f",
	"<", ">", "&", "\u2028", "\u2029", "\u0085", "é", "✓", "😀", "\xff", "\xc3", "\xed\xa0\x80", "id-", "/r/"}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(tricky[r.IntN(len(tricky))])
	}
	return b.String()
}

// randomFloat is a float as a heartbeat or a store may hold one: plain,
// tiny, huge, negative, whole.
func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(5) {
	case 0:
		return float64(r.Int64N(2e9))
	case 1:
		return r.Float64() * 1e-7
	case 2:
		return r.Float64() * 1e22
	case 3:
		return -r.Float64() * 100
	}
	return 1.7e9 + r.Float64()
}

// randomForest is a snapshot of random sessions of random nodes.
func randomForest(r *rand.Rand) *model.Snapshot {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	snap := &model.Snapshot{GeneratedAt: now, Thresholds: model.DefaultThresholds(), ByID: map[string]*model.Node{}}
	for range r.IntN(3) {
		snap.Roots = append(snap.Roots, "/"+randomString(r))
		snap.RootSources = append(snap.RootSources, []string{"", "teaparty", "middle"}[r.IntN(3)])
	}
	for range r.IntN(3) {
		snap.Problems = append(snap.Problems, model.Problem{Path: randomString(r), Error: randomString(r)})
	}
	sessions := r.IntN(12)
	if r.IntN(4) == 0 {
		sessions = 20 + r.IntN(10) // more chunks than encoders
	}
	for s := range sessions {
		snap.Sessions = append(snap.Sessions, randomNode(r, snap, nil, fmt.Sprintf("s%d", s), 0))
	}
	return snap
}

// randomRaw is an extra field's JSON as a heartbeat holds it: nested,
// spaced, its strings as another writer escaped them.
func randomRaw(r *rand.Rand) json.RawMessage {
	str, _ := json.Marshal(randomString(r))
	return json.RawMessage(fmt.Sprintf(`{"v": [%s, %v, {}], "e": [ ]}`, str, randomFloat(r)))
}

func randomNode(r *rand.Rand, snap *model.Snapshot, parent *model.Node, id string, depth int) *model.Node {
	now := snap.GeneratedAt
	n := &model.Node{ID: id + randomString(r), Root: "/r", InfraDir: "/r/" + randomString(r), Source: []string{"", "teaparty", "chatroom"}[r.IntN(3)],
		State:  model.States[r.IntN(len(model.States))],
		Action: model.Actions[r.IntN(len(model.Actions))], Reason: randomString(r)}
	if parent != nil {
		n.Parent, n.ParentID = parent, parent.ID
	}
	if r.IntN(4) > 0 {
		n.HasHeartbeat, n.HeartbeatPath = true, n.InfraDir+"/.heartbeat"
		n.Heartbeat = &model.Heartbeat{PID: r.IntN(70000) - 2, Role: randomString(r), Started: randomFloat(r),
			Status: []string{"", "running", "completed", randomString(r)}[r.IntN(4)], HasStatusField: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			n.Heartbeat.SetOptional(model.HeartbeatOptional{TaskID: randomString(r), Extra: map[string]json.RawMessage{
				"k" + randomString(r): randomRaw(r),
			}})
		}
		n.BeatMtime = now.Add(-time.Duration(r.Int64N(int64(48 * time.Hour))))
	}
	if r.IntN(2) == 0 {
		n.ActivityMtime = now.Add(-time.Duration(r.Int64N(int64(time.Hour))) + time.Duration(r.IntN(3))*time.Second)
	}
	if r.IntN(3) == 0 {
		n.Cfa = &model.CfaState{State: randomString(r)}
	}
	if r.IntN(4) == 0 {
		n.Blocked = &model.Blocked{Question: randomString(r)}
	}
	if r.IntN(3) == 0 {
		n.Entry = &model.ChildEntry{Team: randomString(r), Status: "active"}
	}
	n.Retries = model.RetryCount{Total: r.IntN(12)}
	for range r.IntN(3) {
		n.Flags = append(n.Flags, model.Flags[r.IntN(len(model.Flags))])
	}
	if r.IntN(3) == 0 {
		n.EditRare(func(rare *model.Rare) {
			for range r.IntN(3) {
				rare.SourceFields = append(rare.SourceFields, model.Field{Name: randomString(r), Value: randomString(r)})
			}
			if r.IntN(2) == 0 {
				rare.Problems = []model.Problem{{Path: randomString(r), Error: randomString(r)}}
				rare.OtherParents = []string{randomString(r)}
			}
		})
	}
	snap.ByID[n.ID] = n
	if depth < 4 {
		width := r.IntN(4)
		if depth == 0 && r.IntN(10) == 0 {
			width = 60 // a wide session
		}
		for c := range width {
			n.Children = append(n.Children, randomNode(r, snap, n, fmt.Sprintf("%s/%d", n.ID, c), depth+1))
		}
	}
	return n
}
