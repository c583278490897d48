package teaparty

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// A NULL costs at most its row, never the bus (SPEC §9). TeaParty declares
// every column of both tables NOT NULL, so a NULL is a bus something else
// wrote, or one damaged: the row it is in is a problem naming the table,
// the rowid and the column, and every other row of the bus is read. A
// conversation whose id is NULL cannot be a node (nothing can name it);
// one with another column NULL is read with that column's default. A
// message's NULL is reported where a read takes that message (a question,
// a conversation's newest time); its id is never read, so it costs
// nothing.
func TestANullCostsAtMostItsRowNeverTheBus(t *testing.T) {
	tests := []struct {
		name, table, column string
		row                 string // the conversations id or messages id whose column is made NULL
		lost                string // the node that may be lost with it, "" when none
		problem             bool
	}{
		{name: "conversations id", table: "conversations", column: "id", row: workerID, lost: workerID, problem: true},
		{name: "conversations type", table: "conversations", column: "type", row: workerID, problem: true},
		{name: "conversations state", table: "conversations", column: "state", row: workerID, problem: true},
		{name: "conversations created_at", table: "conversations", column: "created_at", row: workerID, problem: true},
		{name: "conversations awaiting_input", table: "conversations", column: "awaiting_input", row: jobID, problem: true},
		{name: "conversations agent_name", table: "conversations", column: "agent_name", row: workerID, problem: true},
		{name: "conversations parent_conversation_id", table: "conversations", column: "parent_conversation_id", row: workerID, problem: true},
		{name: "conversations request_id", table: "conversations", column: "request_id", row: workerID, problem: true},
		{name: "conversations project_slug", table: "conversations", column: "project_slug", row: workerID, problem: true},
		{name: "conversations worktree_path", table: "conversations", column: "worktree_path", row: workerID, problem: true},
		{name: "conversations pid", table: "conversations", column: "pid", row: workerID, problem: true},
		{name: "conversations pid_started", table: "conversations", column: "pid_started", row: workerID, problem: true},
		{name: "messages content of a question", table: "messages", column: "content", row: "m-ask", problem: true},
		{name: "messages timestamp of a question", table: "messages", column: "timestamp", row: "m-ask", problem: true},
		{name: "messages sender of a question", table: "messages", column: "sender", row: "m-ask", problem: true},
		{name: "messages conversation of a chat", table: "messages", column: "conversation", row: "m-reply", problem: true},
		{name: "messages id", table: "messages", column: "id", row: "m-ask", problem: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			// TeaParty's schema without its NOT NULLs: how a NULL gets in.
			var ddl []string
			for _, stmt := range busDDL {
				ddl = append(ddl, strings.ReplaceAll(stmt, "NOT NULL", ""))
			}
			db := newBus(t, tr.jobBus, ddl)
			insertConv(t, db,
				conv{id: jobID, typ: typeJob, created: 1746638100, awaiting: 1, agent: "webapp-lead"},
				conv{id: workerID, typ: typeDispatch, created: createdAt, parent: jobID, agent: "coding-lead", pid: 4242, pidStarted: 1746638161},
				conv{id: "om", typ: "office_manager", created: 1746638000, agent: "office-manager"},
			)
			insertMessage(t, db, "m-ask", jobID, "webapp-lead", "Approve the plan?", 1746638300)
			insertMessage(t, db, "m-hello", "om", "human", "What is left?", 1746638400)
			insertMessage(t, db, "m-reply", "om", "office-manager", "Two workers.", 1746638500)
			var rowid int64
			if err := db.QueryRow(`SELECT rowid FROM `+tc.table+` WHERE id = ?`, tc.row).Scan(&rowid); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE `+tc.table+` SET [`+tc.column+`] = NULL WHERE rowid = ?`, rowid); err != nil {
				t.Fatal(err)
			}

			nodes, problems := read(t, tr.home)
			// A job row's key is its job's .heartbeat (see package doc).
			key := map[string]string{jobID: filepath.Join(tr.job, protocol.HeartbeatFile), workerID: tr.jobBus + "#" + workerID, "om": tr.jobBus + "#om"}
			for _, id := range []string{jobID, workerID, "om"} {
				if id != tc.lost && nodes[key[id]] == nil {
					t.Errorf("node %s lost with the NULL; nodes %v, problems %v", id, keys(nodes), problems)
				}
			}
			if tc.lost != "" {
				for key := range nodes {
					if strings.HasSuffix(key, "#") {
						t.Errorf("the row of a NULL id is a node keyed %s", key)
					}
				}
			}
			want := fmt.Sprintf("table %s, row %d: %s is NULL", tc.table, rowid, tc.column)
			var found int
			for _, p := range problems {
				if p.Path == tr.jobBus && strings.HasPrefix(p.Error, "read "+tr.jobBus+": ") && strings.Contains(p.Error, want) && !strings.Contains(p.Error, "\n") {
					found++
				}
			}
			switch {
			case tc.problem && (found != 1 || len(problems) != 1):
				t.Errorf("problems %v: want one naming %s and %q", problems, tr.jobBus, want)
			case !tc.problem && len(problems) != 0:
				t.Errorf("problems %v: want none (the column is not read)", problems)
			}
		})
	}
}
