package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

func TestJSONNamesTheSourceOfEveryNodeAndRoot(t *testing.T) {
	snap := sampleSnapshot()
	store := &model.Node{ID: "bus/lead", Root: "/db/messages.db", HeartbeatPath: "/db/messages.db#lead",
		Source: "teaparty", State: model.StateRunning, Action: model.ActionNone}
	snap.Sessions = append(snap.Sessions, store)
	snap.ByID[store.ID] = store
	snap.Roots = append(snap.Roots, "/db/messages.db")
	snap.RootSources = []string{"", "teaparty"}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, snap); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		RootSources []RootJSON       `json:"root_sources"`
		Sessions    []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	child := doc.Sessions[0]["children"].([]any)[0].(map[string]any)
	tests := []struct {
		name      string
		got, want any
	}{
		{"a native node", doc.Sessions[0]["source"], "native"},
		{"a native missing node", child["source"], "native"},
		{"a store's node", doc.Sessions[1]["source"], "teaparty"},
		{"roots with their sources", doc.RootSources,
			[]RootJSON{{"/r", "native"}, {"/db/messages.db", "teaparty"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if mustJSON(tt.got) != mustJSON(tt.want) {
				t.Errorf("got %s, want %s", mustJSON(tt.got), mustJSON(tt.want))
			}
		})
	}
}
