package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Schema names the JSON contract: fields are added, never renamed or removed.
const Schema = "dispatchtop/v1"

// Document is the --once --json output (SPEC §4.1).
type Document struct {
	Schema      string          `json:"schema"`
	GeneratedAt string          `json:"generated_at"`
	Roots       []string        `json:"roots"`
	RootSources []RootJSON      `json:"root_sources"`
	Thresholds  ThresholdsJSON  `json:"thresholds"`
	PidCheck    bool            `json:"pid_check"`
	Summary     SummaryJSON     `json:"summary"`
	Sessions    []NodeJSON      `json:"sessions"`
	Problems    []model.Problem `json:"problems"`
}

// RootJSON is one root and the source that reads it ("native" for the file
// protocol; see package sources).
type RootJSON struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// SummaryJSON is the summary of SPEC §4.1: the counts it always had, then
// every flag and every recommended action, zeros included, so a script reads
// any count without testing for a missing key.
type SummaryJSON struct {
	model.Summary
	Flags   map[model.Flag]int   `json:"flags"`
	Actions map[model.Action]int `json:"actions"`
}

// Summarize counts snap for the document.
func Summarize(snap *model.Snapshot) SummaryJSON {
	sum := SummaryJSON{Summary: snap.Summarize(), Flags: map[model.Flag]int{}, Actions: map[model.Action]int{}}
	for _, f := range model.Flags {
		sum.Flags[f] = sum.ByFlag[f]
	}
	for f, n := range sum.ByFlag {
		sum.Flags[f] = n // a flag outside the list still counts
	}
	for _, a := range model.Actions {
		sum.Actions[a] = 0
	}
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if n.Action != "" {
				sum.Actions[n.Action]++
			}
		})
	}
	return sum
}

// ThresholdsJSON are the thresholds in seconds.
type ThresholdsJSON struct {
	BeatS           float64 `json:"beat_s"`
	StaleS          float64 `json:"stale_s"`
	KillAfterS      float64 `json:"kill_after_s"`
	ExitGraceS      float64 `json:"exit_grace_s"`
	StartToleranceS float64 `json:"start_tolerance_s"`
}

// NodeJSON is one node of the forest (SPEC §4.1 NODE).
type NodeJSON struct {
	ID           string                     `json:"id"`
	InfraDir     string                     `json:"infra_dir"`
	Source       string                     `json:"source"`
	Heartbeat    *string                    `json:"heartbeat"`
	State        model.State                `json:"state"`
	Flags        []model.Flag               `json:"flags"`
	Reason       string                     `json:"reason"`
	Action       model.Action               `json:"action"`
	Role         string                     `json:"role"`
	Team         string                     `json:"team"`
	TaskID       *string                    `json:"task_id"`
	PID          *int                       `json:"pid"`
	Started      *float64                   `json:"started"`
	Status       *string                    `json:"status"`
	BeatAgeS     *float64                   `json:"beat_age_s"`
	ActivityAgeS *float64                   `json:"activity_age_s"`
	Cfa          *CfaJSON                   `json:"cfa"`
	Retries      RetriesJSON                `json:"retries"`
	Blocked      *string                    `json:"blocked"`
	Parent       *string                    `json:"parent"`
	OtherParents []string                   `json:"other_parents,omitempty"`
	Problems     []model.Problem            `json:"problems,omitempty"`
	Extra        map[string]json.RawMessage `json:"extra,omitempty"`
	// SourceFields are what a source other than the native one says of the
	// node beyond the facts (a row id, a tmux session), in its order.
	SourceFields []FieldJSON `json:"source_fields,omitempty"`
	Children     []NodeJSON  `json:"children"`
}

// FieldJSON is one named fact a source shows as it is.
type FieldJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CfaJSON is the node's work state and its outcome.
type CfaJSON struct {
	State   string `json:"state"`
	Outcome string `json:"outcome"`
}

// RetriesJSON counts resumes: in all, in the current CfA state, and left.
type RetriesJSON struct {
	Total int `json:"total"`
	Phase int `json:"phase"`
	Left  int `json:"left"`
}

// BuildDocument turns a snapshot into the JSON document, its ages — the
// beat's, the activity's, the one a reason quotes — measured at GeneratedAt.
func BuildDocument(snap *model.Snapshot) Document {
	doc := documentHead(snap)
	doc.Sessions = make([]NodeJSON, 0, len(snap.Sessions))
	for _, s := range snap.Sessions {
		doc.Sessions = append(doc.Sessions, nodeJSON(s, snap.GeneratedAt, nil))
	}
	return doc
}

// documentHead is the document without its sessions' nodes.
func documentHead(snap *model.Snapshot) Document {
	th := snap.Thresholds
	doc := Document{
		Schema:      Schema,
		GeneratedAt: snap.GeneratedAt.UTC().Format(time.RFC3339),
		Roots:       nonNil(snap.Roots),
		RootSources: rootSources(snap),
		Thresholds: ThresholdsJSON{
			BeatS:           th.Beat.Seconds(),
			StaleS:          th.Stale.Seconds(),
			KillAfterS:      th.KillAfter.Seconds(),
			ExitGraceS:      th.ExitGrace.Seconds(),
			StartToleranceS: th.StartTolerance.Seconds(),
		},
		PidCheck: !th.NoPidCheck,
		Summary:  Summarize(snap),
		Sessions: []NodeJSON{},
		Problems: snap.Problems,
	}
	if doc.Problems == nil {
		doc.Problems = []model.Problem{}
	}
	return doc
}

// rootSources pairs every root with its source; a snapshot built before
// roots had sources is all native.
func rootSources(snap *model.Snapshot) []RootJSON {
	out := make([]RootJSON, len(snap.Roots))
	for i, r := range snap.Roots {
		out[i] = RootJSON{Path: r, Source: string(sources.Native)}
		if i < len(snap.RootSources) {
			out[i].Source = sourceOf(snap.RootSources[i])
		}
	}
	return out
}

// sourceOf names a source kind, "" being the native file protocol.
func sourceOf(kind string) string {
	if kind == "" {
		return string(sources.Native)
	}
	return kind
}

// WriteJSON writes the document, indented, with a trailing newline. Each
// session is written as it is walked, one node at a time (see
// appendModelNode): at 100,000 nodes a whole document of them held more
// than the forest itself, and a session of a million nodes (one TeaParty
// bus) held its NodeJSON tree and its bytes whole.
func WriteJSON(w io.Writer, snap *model.Snapshot) error {
	doc := documentHead(snap)
	return encodeDocument(w, doc, len(snap.Sessions), func(b []byte, i int, a *nodeArena, sp *spiller) ([]byte, error) {
		b, ok := appendModelNode(b, snap.Sessions[i], snap.GeneratedAt, "    ", a, sp)
		switch {
		case ok:
			return b, nil
		case sp.err != nil:
			return b, sp.err
		}
		return b, encodingError(nodeJSON(snap.Sessions[i], snap.GeneratedAt, nil))
	})
}

// appendModelNode appends n and its subtree as appendNode appends its
// NodeJSON, without building that tree: each node's values are made in the
// arena, written, and dropped (the arena reset) before its children are
// walked. sp takes the bytes as they pass spillAt. ok is false when a
// value cannot be encoded or sp's write failed (sp.err).
func appendModelNode(b []byte, n *model.Node, now time.Time, prefix string, a *nodeArena, sp *spiller) ([]byte, bool) {
	a.reset()
	j := nodeValues(n, now, a)
	in := deeper(prefix)
	b, ok := appendNodeMembers(b, &j, in)
	if !ok {
		return b, false
	}
	if len(n.Children) == 0 {
		b = append(b, "[]"...)
		return appendNodeEnd(b, prefix), true
	}
	b = append(b, "[\n"...)
	for i, c := range n.Children {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, deeper(in)...)
		if b, ok = appendModelNode(b, c, now, deeper(in), a, sp); !ok {
			return b, false
		}
		if b = sp.spill(b); sp.err != nil {
			return b, false
		}
	}
	b = append(b, '\n')
	b = append(b, in...)
	b = append(b, ']')
	return appendNodeEnd(b, prefix), true
}

// spillAt is how many bytes of a session are held before they are
// written.
const spillAt = 256 << 10

// spiller takes the bytes of a session as it is encoded, once they pass
// spillAt: emit writes them (or hands them to the writer) and returns an
// empty buffer to go on in. A nil spiller holds every byte.
type spiller struct {
	emit func(b []byte) ([]byte, error)
	err  error
}

// spill emits b when it holds spillAt bytes, keeping emit's first error.
func (s *spiller) spill(b []byte) []byte {
	if s == nil || s.emit == nil || s.err != nil || len(b) < spillAt {
		return b
	}
	b, s.err = s.emit(b)
	return b
}

// encodingError is encoding/json's error for a node appendNode could not
// encode.
func encodingError(n NodeJSON) error {
	_, err := json.Marshal(n)
	if err == nil {
		err = fmt.Errorf("session %s: not encoded", n.ID)
	}
	return err
}

// nodeArena holds the nodes of one session as it is written, and the values
// they point to, in slices reused from session to session: boxing each
// value on its own was ten allocations a node, garbage as soon as its
// session was written. Memory it hands out is valid until the next reset;
// a nil arena allocates each value on the heap, for a document kept whole.
type nodeArena struct {
	strs   []string
	ints   []int
	floats []float64
	cfas   []CfaJSON
	fields []FieldJSON
	nodes  []NodeJSON
}

func (a *nodeArena) reset() {
	a.strs, a.ints, a.floats, a.cfas, a.fields, a.nodes = a.strs[:0], a.ints[:0], a.floats[:0], a.cfas[:0], a.fields[:0], a.nodes[:0]
}

// box returns a pointer to a copy of v, held in *slab. A slab that grows
// leaves the values handed out in the array they were in, unchanged.
func box[T any](a *nodeArena, slab *[]T, v T) *T {
	if a == nil {
		p := new(T) // not &v, which would put every v on the heap
		*p = v
		return p
	}
	*slab = append(*slab, v)
	return &(*slab)[len(*slab)-1]
}

// fieldsOf is an empty list with room for k fields.
func (a *nodeArena) fieldsOf(k int) []FieldJSON {
	if a == nil {
		return make([]FieldJSON, 0, k)
	}
	if cap(a.fields)-len(a.fields) < k {
		// A new slab: the fields handed out stay where they are.
		a.fields = make([]FieldJSON, 0, max(2*cap(a.fields), k, 16))
	}
	n := len(a.fields)
	a.fields = a.fields[:n+k]
	return a.fields[n : n : n+k]
}

// children is an empty list with room for k nodes (never nil: a leaf's
// children are [], not null).
func (a *nodeArena) children(k int) []NodeJSON {
	if a == nil {
		return make([]NodeJSON, 0, k)
	}
	if a.nodes == nil || cap(a.nodes)-len(a.nodes) < k {
		// A new slab: the nodes handed out stay where they are.
		a.nodes = make([]NodeJSON, 0, max(2*cap(a.nodes), k, 16))
	}
	n := len(a.nodes)
	a.nodes = a.nodes[:n+k]
	return a.nodes[n : n : n+k]
}

// EncodeDocument writes doc exactly as an indented json.Encoder would, one
// session at a time, but for a node's non-finite float, which encoding/json
// refuses (failing the whole document) and this writes as null: at 10,000 nodes the whole document is 11 MB, and
// encoding it in one piece held it twice over (compact, then indented) in
// freshly faulted memory, which cost more than the scan itself.
func EncodeDocument(w io.Writer, doc Document) error {
	return encodeDocument(w, doc, len(doc.Sessions), func(b []byte, i int, _ *nodeArena, _ *spiller) ([]byte, error) {
		b, ok := appendNode(b, &doc.Sessions[i], "    ")
		if !ok {
			return b, encodingError(doc.Sessions[i])
		}
		return b, nil
	})
}

// sessionWriter appends the list line of session i to b, its values held
// in a, its bytes handed to sp as they pass spillAt.
type sessionWriter func(b []byte, i int, a *nodeArena, sp *spiller) ([]byte, error)

// encodeDocument writes doc with the sessions session(0..count-1) writes,
// in place of its own; session may be called from several goroutines at
// once, each with an arena and a spiller of its own.
func encodeDocument(w io.Writer, doc Document, count int, session sessionWriter) error {
	e := docEncoder{w: bufio.NewWriterSize(w, 64<<10)}
	e.w.WriteString("{\n")
	e.field("schema", doc.Schema)
	e.field("generated_at", doc.GeneratedAt)
	e.field("roots", doc.Roots)
	e.field("root_sources", doc.RootSources)
	e.field("thresholds", doc.Thresholds)
	e.field("pid_check", doc.PidCheck)
	e.field("summary", doc.Summary)
	if count == 0 {
		e.field("sessions", doc.Sessions)
	} else {
		e.w.WriteString(`  "sessions": [` + "\n")
		e.sessions(count, session)
		e.w.WriteString("  ],\n")
	}
	e.w.WriteString(`  "problems": `)
	e.value(doc.Problems, "  ")
	e.w.WriteString("\n}\n")
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// sessionsAChunk is how many sessions one encoder writes at a time.
const sessionsAChunk = 4

// sessions writes the sessions, each line of the list after the first
// joined by a comma. They are encoded a chunk at a time by an encoder on
// every core, chunk k by encoder k mod n, and written in order: one encoder
// was a tenth of `--once --json`, alone after the parallel scan. A chunk
// larger than spillAt reaches the writer in parts, in order, as it is
// encoded.
func (e *docEncoder) sessions(count int, session sessionWriter) {
	chunks := (count + sessionsAChunk - 1) / sessionsAChunk
	encoders := min(runtime.GOMAXPROCS(0), chunks)
	if encoders <= 1 {
		var a nodeArena
		sp := &spiller{emit: func(b []byte) ([]byte, error) {
			_, err := e.w.Write(b)
			return b[:0], err
		}}
		for lo := 0; lo < count && e.err == nil; lo += sessionsAChunk {
			e.buf, e.err = appendSessions(e.buf[:0], lo, min(lo+sessionsAChunk, count), count, session, &a, sp)
			if e.err == nil {
				_, e.err = e.w.Write(e.buf)
			}
		}
		return
	}
	// more: a part of a chunk, whose next part follows.
	type encoded struct {
		b    []byte
		err  error
		more bool
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	out := make([]chan encoded, encoders)
	free := make([]chan []byte, encoders)
	for k := range encoders {
		// Two buffers an encoder: it fills one while the other is written.
		out[k], free[k] = make(chan encoded, 1), make(chan []byte, 2)
		free[k] <- nil
		free[k] <- nil
		wg.Go(func() {
			var a nodeArena
			sp := &spiller{emit: func(b []byte) ([]byte, error) {
				select {
				case out[k] <- encoded{b: b, more: true}:
				case <-stop:
					return nil, errStopped
				}
				select {
				case next := <-free[k]:
					return next[:0], nil
				case <-stop:
					return nil, errStopped
				}
			}}
			for c := k; c < chunks; c += encoders {
				var b []byte
				select {
				case b = <-free[k]:
				case <-stop:
					return
				}
				lo := c * sessionsAChunk
				b, err := appendSessions(b[:0], lo, min(lo+sessionsAChunk, count), count, session, &a, sp)
				if errors.Is(err, errStopped) {
					return
				}
				select {
				case out[k] <- encoded{b: b, err: err}:
				case <-stop:
					return
				}
			}
		})
	}
	for c := 0; c < chunks && e.err == nil; c++ {
		for {
			got := <-out[c%encoders]
			if e.err = got.err; e.err == nil {
				_, e.err = e.w.Write(got.b)
			}
			free[c%encoders] <- got.b
			if !got.more || e.err != nil {
				break
			}
		}
	}
	close(stop)
	wg.Wait()
}

// errStopped ends an encoder whose output is no longer written.
var errStopped = errors.New("the document's writing stopped")

// appendSessions appends the list lines of sessions lo to hi-1 of count.
func appendSessions(b []byte, lo, hi, count int, session sessionWriter, a *nodeArena, sp *spiller) ([]byte, error) {
	for i := lo; i < hi; i++ {
		b = append(b, "    "...)
		var err error
		if b, err = session(b, i, a, sp); err != nil {
			return b, err
		}
		if i < count-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return b, nil
}

// docEncoder writes indented JSON values, keeping the first error.
type docEncoder struct {
	w      *bufio.Writer
	indent bytes.Buffer
	buf    []byte
	err    error
}

// field writes one member of the top-level object, followed by a comma.
func (e *docEncoder) field(name string, v any) {
	e.w.WriteString(`  "` + name + `": `)
	e.value(v, "  ")
	e.w.WriteString(",\n")
}

// value writes v indented by two spaces a level under prefix. The buffers
// are reused from value to value.
func (e *docEncoder) value(v any, prefix string) {
	if e.err != nil {
		return
	}
	compact, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.indent.Reset()
	if err := json.Indent(&e.indent, compact, prefix, "  "); err != nil {
		e.err = err
		return
	}
	e.w.Write(e.indent.Bytes())
}

// nodeJSON is n and its subtree as the document shows them, its values
// held in a (nil: on the heap).
func nodeJSON(n *model.Node, now time.Time, a *nodeArena) NodeJSON {
	out := nodeValues(n, now, a)
	out.Children = a.children(len(n.Children))
	for _, c := range n.Children {
		out.Children = append(out.Children, nodeJSON(c, now, a))
	}
	return out
}

// nodeValues is n as the document shows it, without its children (an
// empty list), its values held in a (nil: on the heap).
func nodeValues(n *model.Node, now time.Time, a *nodeArena) NodeJSON {
	out := NodeJSON{
		ID:       n.ID,
		InfraDir: n.InfraDir,
		Source:   sourceOf(n.Source),
		State:    n.State,
		Flags:    nonNil(n.Flags),
		Reason:   n.ReasonAt(now),
		Action:   n.Action,
		Role:     n.Role(),
		Team:     n.Team(),
		Retries:  Retries(n),
		Problems: n.Problems(),
		Children: []NodeJSON{},
	}
	var strs *[]string
	if a != nil {
		strs = &a.strs
	}
	if n.HeartbeatPath != "" {
		out.Heartbeat = box(a, strs, n.HeartbeatPath)
	}
	if id := n.TaskID(); id != "" {
		out.TaskID = box(a, strs, id)
	}
	if pid := n.PID(); pid != 0 {
		out.PID = box(a, intsOf(a), pid)
	}
	if hb := n.Heartbeat; hb != nil {
		// A started that is no number of seconds (±Inf from a store's
		// REAL) is unverified, as the classifier reads it: null here.
		if hb.Started > 0 && !math.IsInf(hb.Started, 1) {
			out.Started = box(a, floatsOf(a), hb.Started)
		}
		if status, ok := statusJSON(hb, n.HeartbeatRaw()); ok {
			out.Status = box(a, strs, status)
		}
		if extra := hb.Optional().Extra; len(extra) > 0 {
			out.Extra = extra
		}
	}
	if !n.BeatMtime.IsZero() {
		out.BeatAgeS = box(a, floatsOf(a), ageSeconds(now, n.BeatMtime))
	}
	if !n.ActivityMtime.IsZero() {
		out.ActivityAgeS = box(a, floatsOf(a), ageSeconds(now, n.ActivityMtime))
	}
	if n.Cfa != nil {
		var cfas *[]CfaJSON
		if a != nil {
			cfas = &a.cfas
		}
		out.Cfa = box(a, cfas, CfaJSON{State: n.Cfa.State, Outcome: n.Cfa.Outcome()})
	}
	if n.Blocked != nil {
		out.Blocked = box(a, strs, n.Blocked.Question)
	}
	if n.ParentID != "" {
		out.Parent = box(a, strs, n.ParentID)
	}
	out.OtherParents = n.OtherParents()
	if sf := n.SourceFields(); len(sf) > 0 {
		out.SourceFields = a.fieldsOf(len(sf))
		for _, f := range sf {
			out.SourceFields = append(out.SourceFields, FieldJSON{Name: f.Name, Value: f.Value})
		}
	}
	return out
}

func intsOf(a *nodeArena) *[]int {
	if a == nil {
		return nil
	}
	return &a.ints
}

func floatsOf(a *nodeArena) *[]float64 {
	if a == nil {
		return nil
	}
	return &a.floats
}

// statusJSON is the heartbeat's status as written (SPEC §4.1: raw, or
// null): null when the file holds no status string (absent, null, or of
// another type). A heartbeat parsed from its file says whether it held one
// (HasStatusField); one built elsewhere with its bytes is looked up in
// them; without either (a heartbeat decoded from another host's document)
// empty means absent.
func statusJSON(hb *model.Heartbeat, raw []byte) (string, bool) {
	if hb.Status != "" || hb.HasStatusField {
		return hb.Status, true
	}
	if raw == nil {
		return "", false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", false
	}
	var status *string // JSON null leaves it nil
	if err := json.Unmarshal(fields["status"], &status); err != nil || fields["status"] == nil || status == nil {
		return "", false
	}
	return *status, true
}

// Retries reports the node's resume counts and what is left of the budget
// (3 per CfA state, 9 per node), as the classifier counts them.
func Retries(n *model.Node) RetriesJSON {
	phase, left := liveness.RetriesLeft(n)
	return RetriesJSON{Total: n.Retries.Total, Phase: phase, Left: left}
}

// ageSeconds is now - t in seconds, rounded to milliseconds; never negative
// (a clock a little ahead on the writer's side is not a future beat).
func ageSeconds(now, t time.Time) float64 {
	s := now.Sub(t).Seconds()
	if s < 0 {
		s = 0
	}
	return math.Round(s*1000) / 1000
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
