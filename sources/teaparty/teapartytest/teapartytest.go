// Package teapartytest builds TeaParty message buses as TeaParty itself
// creates them: the reader's tests, the demo's bus job and the benchmarks
// write through it, so that every one of them reads the real schema.
package teapartytest

import (
	"database/sql"
	"fmt"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// DDL is what TeaParty runs on every open of a bus, in its order
// (teaparty/messaging/conversations.py, SqliteMessageBus.__init__, at
// commit 3ad6bdc424401c5ad61fed33909871e329645d9a).
var DDL = storefixtures.TeaPartyBusDDL

// Open opens the database at path (its dir created if needed) for writing,
// through one connection, and runs ddl on it: DDL for a bus as TeaParty
// creates it, nil for one that exists, or a part of DDL for an older or a
// broken one.
func Open(path string, ddl []string) (*sql.DB, error) { return storefixtures.Open(path, ddl) }

// Conversation is one row of the `conversations` table.
type Conversation struct {
	ID, Type, State string // State "" is "active"
	CreatedAt       float64
	AwaitingInput   int
	Agent, Parent   string
	RequestID, Slug string
	Worktree        string
	PID             int
	PIDStarted      float64
}

// Insert writes conversations rows.
func Insert(db *sql.DB, rows ...Conversation) error {
	for _, c := range rows {
		if c.State == "" {
			c.State = "active"
		}
		_, err := db.Exec(`INSERT INTO conversations (id, type, state, created_at, awaiting_input, agent_name,
			parent_conversation_id, request_id, project_slug, worktree_path, pid, pid_started)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.Type, c.State, c.CreatedAt, c.AwaitingInput, c.Agent, c.Parent, c.RequestID, c.Slug, c.Worktree, c.PID, c.PIDStarted)
		if err != nil {
			return fmt.Errorf("insert conversation %s: %w", c.ID, err)
		}
	}
	return nil
}

// SetState sets a conversation's state, as TeaParty's CloseConversation
// ("closed") or a withdrawal does.
func SetState(db *sql.DB, id, state string) error {
	if _, err := db.Exec(`UPDATE conversations SET state = ? WHERE id = ?`, state, id); err != nil {
		return fmt.Errorf("set conversation %s %s: %w", id, state, err)
	}
	return nil
}

// InsertMessage writes one messages row.
func InsertMessage(db *sql.DB, id, conversation, sender, content string, ts float64) error {
	if _, err := db.Exec(`INSERT INTO messages VALUES (?, ?, ?, ?, ?)`, id, conversation, sender, content, ts); err != nil {
		return fmt.Errorf("insert message %s: %w", id, err)
	}
	return nil
}
