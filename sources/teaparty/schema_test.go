package teaparty

import (
	"strings"
	"testing"
)

// A bus is read with one query when it has every column read; one that
// lacks some is read as its schema says. A bus no TeaParty has opened
// since it added columns reads them as the defaults its ALTERs give; a bus
// without messages has no questions and no message times; a messages
// table that lacks a column of TeaParty's fails the bus, naming it, whether
// or not a row needs it read (a job's workers need no message): TeaParty
// creates all five on every open.
func TestBusOfAnotherSchemaIsReadAsItsSchemaSays(t *testing.T) {
	created := busDDL[:4] // WAL, messages, its index, conversations as first created
	if !strings.HasPrefix(created[3], "CREATE TABLE IF NOT EXISTS conversations") {
		t.Fatalf("busDDL[3] = %.50q, want the conversations table", created[3])
	}
	withoutMessages := append([]string{busDDL[0]}, busDDL[3:]...)
	messagesWithoutTimestamp := append([]string{busDDL[0],
		`CREATE TABLE messages (id TEXT PRIMARY KEY, conversation TEXT NOT NULL, sender TEXT NOT NULL, content TEXT NOT NULL)`},
		busDDL[3:]...)
	tests := []struct {
		name    string
		ddl     []string
		insert  string
		status  string // of the one node, "" when the bus is a problem
		blocked string // the node's question
		problem string // what the problem says, "" for none
	}{
		{name: "before the ALTERs", ddl: created,
			insert: `INSERT INTO conversations VALUES ('dispatch:ab12', 'dispatch', 'active', 1746638100, 0)`,
			status: "starting"},
		{name: "without messages", ddl: withoutMessages,
			insert: `INSERT INTO conversations (id, type, state, created_at, request_id, pid) VALUES ('proxy:r1', 'proxy', 'active', 1746638100, 'r1', 4242)`,
			status: "running", blocked: "escalation r1 open"},
		{name: "messages without a timestamp, read", ddl: messagesWithoutTimestamp,
			insert:  `INSERT INTO conversations (id, type, state, created_at) VALUES ('om', 'office_manager', 'active', 1746638100)`,
			problem: `table "messages" lacks column timestamp`},
		{name: "messages without a timestamp, not read", ddl: messagesWithoutTimestamp,
			insert:  `INSERT INTO conversations (id, type, state, created_at) VALUES ('dispatch:ab12', 'dispatch', 'active', 1746638100)`,
			problem: `table "messages" lacks column timestamp`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			db := newBus(t, tr.jobBus, tt.ddl)
			if _, err := db.Exec(tt.insert); err != nil {
				t.Fatal(err)
			}
			facts := New().Read(tr.home, now)
			if tt.problem != "" {
				if len(facts.Problems) != 1 || facts.Problems[0].Path != tr.jobBus ||
					!strings.Contains(facts.Problems[0].Error, tr.jobBus) || !strings.Contains(facts.Problems[0].Error, tt.problem) {
					t.Fatalf("problems %v, want one naming %s and %q", facts.Problems, tr.jobBus, tt.problem)
				}
				if len(facts.Nodes) != 0 {
					t.Fatalf("nodes %d, want none from a bus that is a problem", len(facts.Nodes))
				}
				return
			}
			if len(facts.Problems) != 0 || len(facts.Nodes) != 1 {
				t.Fatalf("nodes %d, problems %v: want one node and no problem", len(facts.Nodes), facts.Problems)
			}
			n := facts.Nodes[0]
			if n.Heartbeat.Status != tt.status || n.Heartbeat.Role != "" || n.Heartbeat.ParentHeartbeat != "" {
				t.Errorf("heartbeat %+v: want status %q and the ALTERs' defaults (no agent, no parent)", n.Heartbeat, tt.status)
			}
			switch {
			case tt.blocked == "" && n.Blocked != nil:
				t.Errorf("blocked %+v, want none", n.Blocked)
			case tt.blocked != "" && (n.Blocked == nil || n.Blocked.Question != tt.blocked):
				t.Errorf("blocked %+v, want %q", n.Blocked, tt.blocked)
			}
		})
	}
}
