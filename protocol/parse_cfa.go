package protocol

// The `.cfa-state.json` (SPEC §1): its fields, its plain reading (the
// definition: encoding/json's, into cfaFile) and what a CfA state keeps.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// The CfA state's fields, one row each; cfaDetailRows are those kept
// behind model.CfaDetail.
const (
	cfaState = iota
	cfaHistory
	cfaBacktracks
	cfaTaskID
	cfaPhase
	cfaActor
	cfaParentID
	cfaTeamID
	cfaDepth
	cfaRows

	cfaDetailRows = 1<<cfaHistory | 1<<cfaPhase | 1<<cfaActor | 1<<cfaParentID | 1<<cfaTeamID | 1<<cfaDepth
)

var cfaFields = [cfaRows]fieldSpec{
	cfaState:      {"state", text},
	cfaHistory:    {"history", list},
	cfaBacktracks: {"backtrack_count", integer},
	cfaTaskID:     {"task_id", text},
	cfaPhase:      {"phase", text},
	cfaActor:      {"actor", text},
	cfaParentID:   {"parent_id", text},
	cfaTeamID:     {"team_id", text},
	cfaDepth:      {"depth", integer},
}

// cfaFile is a CfA state's fields as the file has them, flat: what the
// plain reading decodes into (its tags are the table's names, which a test
// holds them to) and the fast reading keeps its rows in.
type cfaFile struct {
	State          string            `json:"state"`
	History        []json.RawMessage `json:"history"`
	BacktrackCount int               `json:"backtrack_count"`
	TaskID         string            `json:"task_id"`
	Phase          string            `json:"phase,omitempty"`
	Actor          string            `json:"actor,omitempty"`
	ParentID       string            `json:"parent_id,omitempty"`
	TeamID         string            `json:"team_id,omitempty"`
	Depth          int               `json:"depth,omitempty"`
}

// ParseCfa parses a `.cfa-state.json`, its history kept.
func ParseCfa(b []byte) (model.CfaState, error) {
	c, err := ParseCfaState(b, true)
	if err != nil {
		return model.CfaState{}, err
	}
	return *c, nil
}

// ParseCfaState is ParseCfa, its history kept only when keepHistory (a scan
// that keeps no file bytes keeps none), in one allocation with its detail
// when it has one: a scan reads one for nearly every node. The detail is
// made when the file names one of its fields, even as null, as
// encoding/json makes model.CfaState's; without keepHistory the history
// is checked, not kept, and makes none.
func ParseCfaState(b []byte, keepHistory bool) (*model.CfaState, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errEmpty
	}
	var f cfaFile
	present, ok := readCfaFast(b, keepHistory, &f)
	if !ok {
		var err error
		if f, present, err = parseCfaPlain(b); err != nil {
			return nil, err
		}
	}
	if !keepHistory {
		f.History, present = nil, present&^(1<<cfaHistory)
	}
	return cfaStateOf(&f, present), nil
}

// parseCfaPlain is the CfA state's definition: encoding/json's reading
// into cfaFile, and its errors. cfaFile is read as model.CfaState, named
// so: encoding/json's errors name the field and its struct (`field
// "history"`, "Go struct field CfaState.history"), and the problem a node
// shows must not name where this program keeps it. present has the bit
// of each row a key matches as encoding/json matches keys to fields,
// whatever their case.
func parseCfaPlain(b []byte) (f cfaFile, present uint32, err error) {
	type CfaState cfaFile
	var c CfaState
	if err := json.Unmarshal(b, &c); err != nil {
		return cfaFile{}, 0, describeJSONError(err)
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return cfaFile{}, 0, errors.New("not a JSON object: null")
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(b, &members) // cannot fail: b was just read as an object
	for key := range members {
		for i, row := range cfaFields {
			if strings.EqualFold(key, row.name) { // as encoding/json folds
				present |= 1 << i
			}
		}
	}
	return cfaFile(c), present, nil
}

// cfaStateOf is f as a model.CfaState, with a detail when a row of the
// detail was given.
func cfaStateOf(f *cfaFile, present uint32) *model.CfaState {
	c := model.CfaState{State: f.State, BacktrackCount: f.BacktrackCount, TaskID: f.TaskID}
	if present&cfaDetailRows == 0 {
		p := new(model.CfaState)
		*p = c
		return p
	}
	both := new(struct {
		c model.CfaState
		d model.CfaDetail
	})
	both.c = c
	both.d = model.CfaDetail{History: f.History, Phase: f.Phase, Actor: f.Actor, ParentID: f.ParentID, TeamID: f.TeamID, Depth: f.Depth}
	both.c.CfaDetail = &both.d
	return &both.c
}
