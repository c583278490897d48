package remote

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Decode reads a dispatchtop/v1 document within the default caps
// (DefaultMaxBody bytes, DefaultMaxNodes nodes; a *CapError past one). A document of
// another schema is an error: the fields would mean something else.
func Decode(r io.Reader) (*report.Document, error) {
	return decode(r, capsOf(DefaultMaxBody, DefaultMaxNodes))
}

// decode reads a document within the caps, a session at a time: the
// decoder holds one session's bytes, never the whole answer's.
func decode(r io.Reader, c caps) (*report.Document, error) {
	g := newGuard(r, c)
	doc, err := decodeStream(json.NewDecoder(g))
	if g.err != nil {
		return nil, g.err // the cap, not what the cut left the decoder
	}
	if err != nil {
		return nil, fmt.Errorf("decode the snapshot: %w", err)
	}
	if doc.Schema != report.Schema {
		return nil, fmt.Errorf("decode the snapshot: schema %q, want %q", doc.Schema, report.Schema)
	}
	return doc, nil
}

// decodeStream reads the document's object: every member but the sessions
// as encoding/json reads a Document (its keys matched as it matches them),
// the sessions one by one.
func decodeStream(dec *json.Decoder) (*report.Document, error) {
	if err := wantDelim(dec, '{', "the document"); err != nil {
		return nil, err
	}
	// The other members, in their order (the last of a key given twice
	// wins, as in encoding/json), as one object.
	head := []byte{'{'}
	var sessions []report.NodeJSON
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if strings.EqualFold(key, "sessions") {
			if sessions, err = decodeSessions(dec, sessions); err != nil {
				return nil, err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if len(head) > 1 {
			head = append(head, ',')
		}
		quoted, _ := json.Marshal(key) // a string: no error
		head = append(append(append(head, quoted...), ':'), raw...)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var doc report.Document
	if err := json.Unmarshal(append(head, '}'), &doc); err != nil {
		return nil, err
	}
	doc.Sessions = sessions
	return &doc, nil
}

// decodeSessions reads the list of sessions (null is none) into the
// sessions read before: a key given twice is read as encoding/json reads
// it, into the same elements.
func decodeSessions(dec *json.Decoder, out []report.NodeJSON) ([]report.NodeJSON, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("sessions: want a list, got %v", tok)
	}
	out = out[:0]
	for dec.More() {
		if len(out) < cap(out) {
			out = out[:len(out)+1]
		} else {
			out = append(out, report.NodeJSON{})
		}
		if err := dec.Decode(&out[len(out)-1]); err != nil {
			return nil, fmt.Errorf("sessions[%d]: %w", len(out)-1, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if out == nil {
		out = []report.NodeJSON{} // [] is an empty list, not none
	}
	return out, nil
}

// wantDelim reads the token d opening what.
func wantDelim(dec *json.Decoder, d json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("%s: want %v, got %v", what, d, tok)
	}
	return nil
}

// ToSnapshot turns a document back into a classified snapshot. Ages become
// mtimes against received (the local clock when the document arrived), so
// a host whose clock is off still shows the right ages. With a prefix, every
// id (and parent id) becomes prefix/id and every session gets parent as its
// parent; the document is not changed.
func ToSnapshot(doc *report.Document, received time.Time, prefix string, parent *model.Node) *model.Snapshot {
	snap := &model.Snapshot{
		GeneratedAt: received,
		Roots:       slices.Clone(doc.Roots),
		Thresholds:  thresholdsOf(doc),
		Sessions:    make([]*model.Node, 0, len(doc.Sessions)),
		ByID:        map[string]*model.Node{},
		Problems:    slices.Clone(doc.Problems),
	}
	b := builder{received: received, prefix: prefix, byID: snap.ByID}
	for _, s := range doc.Sessions {
		snap.Sessions = append(snap.Sessions, b.node(s, parent))
	}
	return snap
}

// thresholdsOf are a document's thresholds.
func thresholdsOf(doc *report.Document) model.Thresholds {
	th := doc.Thresholds
	return model.Thresholds{
		Beat:           seconds(th.BeatS),
		Stale:          seconds(th.StaleS),
		KillAfter:      seconds(th.KillAfterS),
		ExitGrace:      seconds(th.ExitGraceS),
		StartTolerance: seconds(th.StartToleranceS),
		NoPidCheck:     !doc.PidCheck,
	}
}

type builder struct {
	received time.Time
	prefix   string
	byID     map[string]*model.Node // each node built, when not nil
	words    *interner              // the words nodes repeat, when not nil
}

func (b builder) id(id string) string {
	if b.prefix == "" {
		return id
	}
	return b.prefix + "/" + id
}

func (b builder) node(j report.NodeJSON, parent *model.Node) *model.Node {
	n := b.values(j, parent)
	n.Children = make([]*model.Node, 0, len(j.Children))
	for _, c := range j.Children {
		n.Children = append(n.Children, b.node(c, n))
	}
	return n
}

// values is the node j without its children, indexed in byID.
func (b builder) values(j report.NodeJSON, parent *model.Node) *model.Node {
	w := b.words
	n := &model.Node{
		ID:       b.id(j.ID),
		InfraDir: j.InfraDir,
		State:    model.State(w.word(string(j.State))),
		Flags:    w.flags(j.Flags),
		Reason:   w.word(j.Reason),
		Action:   model.Action(w.word(string(j.Action))),
		Retries:  model.RetryCount{Total: j.Retries.Total},
		Parent:   parent,
		Legacy:   slices.Contains(j.Flags, model.FlagLegacy),
	}
	rare := model.Rare{Problems: slices.Clone(j.Problems)}
	for _, p := range j.OtherParents {
		rare.OtherParents = append(rare.OtherParents, b.id(p))
	}
	if j.Source != string(sources.Native) {
		n.Source = w.word(j.Source)
	}
	for _, f := range j.SourceFields {
		rare.SourceFields = append(rare.SourceFields, model.Field{Name: f.Name, Value: f.Value})
	}
	if parent != nil {
		n.ParentID = parent.ID
	}
	if j.Parent != nil {
		n.ParentID = b.id(*j.Parent)
	}
	if j.Heartbeat != nil {
		n.HeartbeatPath = *j.Heartbeat
		if strings.HasPrefix(n.HeartbeatPath, n.InfraDir) {
			n.InfraDir = n.HeartbeatPath[:len(n.InfraDir)] // one string for both
		}
	}
	// A heartbeat (a status, or a heartbeat path on a node that is neither
	// missing nor legacy) carries its role, team, task id and pid. Without
	// one, a pid is a legacy sentinel's.
	if j.Status != nil || (j.Heartbeat != nil && j.State != model.StateMissing && !n.Legacy) {
		n.HasHeartbeat = true
		hb := &model.Heartbeat{Role: w.word(j.Role)}
		opt := model.HeartbeatOptional{Team: w.word(j.Team), Extra: j.Extra}
		if j.Status != nil {
			hb.Status = w.word(*j.Status)
		}
		if j.PID != nil {
			hb.PID = *j.PID
		}
		if j.Started != nil {
			hb.Started = *j.Started
		}
		if j.TaskID != nil {
			opt.TaskID = *j.TaskID
		}
		hb.SetOptional(opt)
		n.Heartbeat = hb
	} else {
		if j.PID != nil {
			rare.LegacyPID = *j.PID
		}
		if j.Team != "" || j.TaskID != nil {
			n.Entry = &model.ChildEntry{Team: j.Team, TaskID: j.TaskID, Heartbeat: n.HeartbeatPath}
		}
	}
	if j.BeatAgeS != nil {
		n.BeatMtime = b.received.Add(-seconds(*j.BeatAgeS))
	}
	if j.ActivityAgeS != nil {
		n.ActivityMtime = b.received.Add(-seconds(*j.ActivityAgeS))
	}
	// The phase count is by CfA state, as the classifier reads it back.
	phaseKey := ""
	if j.Cfa != nil {
		n.Cfa = w.cfa(j.Cfa.State)
		phaseKey = n.Cfa.State
	}
	if j.Retries.Phase != 0 {
		n.Retries.ByPhase = map[string]int{phaseKey: j.Retries.Phase}
	}
	if j.Blocked != nil {
		n.Blocked = &model.Blocked{Question: *j.Blocked}
	}
	// A fresh node: a Rare only when it holds a fact (these are all values
	// sets), not one built to be dropped (SPEC §8's churn: most changes).
	if len(rare.Problems)+len(rare.OtherParents)+len(rare.SourceFields) > 0 || rare.LegacyPID != 0 {
		n.EditRare(func(r *model.Rare) { *r = rare })
	}
	if b.byID != nil {
		b.byID[n.ID] = n
	}
	return n
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second))
}
