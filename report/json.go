package report

// The document of SPEC §4.1: its types, BuildDocument, and each node's
// values as the document shows them (nodeValues), which both writers use.
// Its bytes are defined by MarshalDocument (json_reference.go) and
// streamed by WriteJSON (json_stream.go).

import (
	"encoding/json"
	"math"
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
	strs := stringsOf(a)
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
		heartbeatValues(&out, hb, n.HeartbeatRaw(), a)
	}
	if !n.BeatMtime.IsZero() {
		out.BeatAgeS = box(a, floatsOf(a), ageSeconds(now, n.BeatMtime))
	}
	if !n.ActivityMtime.IsZero() {
		out.ActivityAgeS = box(a, floatsOf(a), ageSeconds(now, n.ActivityMtime))
	}
	if n.Cfa != nil {
		out.Cfa = box(a, cfasOf(a), CfaJSON{State: n.Cfa.State, Outcome: n.Cfa.Outcome()})
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

// heartbeatValues sets out's values read from the heartbeat: started,
// status, extra.
func heartbeatValues(out *NodeJSON, hb *model.Heartbeat, raw []byte, a *nodeArena) {
	// A started that is no number of seconds (±Inf from a store's REAL)
	// is unverified, as the classifier reads it: null here.
	if hb.Started > 0 && !math.IsInf(hb.Started, 1) {
		out.Started = box(a, floatsOf(a), hb.Started)
	}
	if status, ok := statusJSON(hb, raw); ok {
		out.Status = box(a, stringsOf(a), status)
	}
	if extra := hb.Optional().Extra; len(extra) > 0 {
		out.Extra = extra
	}
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
