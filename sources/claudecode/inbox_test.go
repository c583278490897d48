package claudecode

import (
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// docs/sources.md, Claude Code, inboxes: the protocol messages beyond plan
// approval, as iliaal/compound-engineering-plugin's message-formats.md
// shows them (a JSON document in a message's text), each row a member of
// a team whose lead is a real process.
func TestInboxProtocolRows(t *testing.T) {
	const leadID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }
	msg := func(from, text, ts string) map[string]any {
		return map[string]any{"from": from, "text": text, "timestamp": ts, "read": false}
	}
	idle := func(from string) string {
		return `{"type":"idle_notification","from":"` + from + `","completedTaskId":"2","completedStatus":"completed"}`
	}
	shutdown := func(id string) string {
		return `{"type":"shutdown_request","requestId":"` + id + `","from":"team-lead","reason":"All tasks complete"}`
	}
	reply := func(kind, id, from string) string {
		return `{"type":"` + kind + `","requestId":"` + id + `","from":"` + from + `","paneId":"%5","backendType":"tmux"}`
	}
	tests := []struct {
		name    string
		backend string // in-process, or tmux (a pane on no server: gone)
		lead    []map[string]any
		own     []any // its own inbox: messages, or anything
		want    rowWant
		field   string // a part of a source field it shows
	}{
		{name: "an idle_notification after the last message to it: idle", backend: "in-process",
			lead: []map[string]any{msg("worker", idle("worker"), at(-time.Minute))},
			own:  []any{msg("team-lead", "start on task 2", at(-2*time.Minute))},
			want: rowWant{state: model.StateRunning, flags: []model.Flag{model.FlagIdle}}, field: "idle since"},
		{name: "a message to it after its idle_notification: it works again", backend: "in-process",
			lead: []map[string]any{msg("worker", idle("worker"), at(-2*time.Minute))},
			own:  []any{msg("team-lead", "now task 3", at(-time.Minute))},
			want: rowWant{state: model.StateRunning}},
		{name: "a shutdown_request unanswered, still running: shown", backend: "in-process",
			own:  []any{msg("team-lead", shutdown("shutdown-1@worker"), at(-time.Minute))},
			want: rowWant{state: model.StateRunning}, field: "shutdown requested at"},
		{name: "asked to shut down, its pane gone since: finished, not dead", backend: "tmux",
			own:  []any{msg("team-lead", shutdown("shutdown-1@worker"), at(-time.Minute))},
			want: rowWant{state: model.StateFinished, status: model.StatusCompleted}, field: "shutdown requested at"},
		{name: "shutdown approved, its pane gone: finished", backend: "tmux",
			lead: []map[string]any{msg("worker", reply("shutdown_approved", "shutdown-1@worker", "worker"), at(-time.Minute))},
			own:  []any{msg("team-lead", shutdown("shutdown-1@worker"), at(-2*time.Minute))},
			want: rowWant{state: model.StateFinished, status: model.StatusCompleted}, field: "shutdown approved at"},
		{name: "shutdown rejected, its pane gone: dead", backend: "tmux",
			lead: []map[string]any{msg("worker", reply("shutdown_rejected", "shutdown-1@worker", "worker"), at(-time.Minute))},
			own:  []any{msg("team-lead", shutdown("shutdown-1@worker"), at(-2*time.Minute))},
			want: rowWant{state: model.StateDead, reason: "gone"}},
		{name: "a type this reader does not know: ignored", backend: "in-process",
			own:  []any{msg("team-lead", `{"type":"task_assignment","taskId":"7"}`, at(-time.Minute))},
			want: rowWant{state: model.StateRunning}},
		{name: "a text that is a JSON document cut short: a problem naming the inbox", backend: "in-process",
			own:  []any{msg("team-lead", `{"type":"shutdown_request","requestId":}`, at(-time.Minute))},
			want: rowWant{state: model.StateRunning, problem: []string{"inboxes/worker.json", "does not parse"}}},
		{name: "a message that is no object: a problem naming the inbox", backend: "in-process",
			own:  []any{"shutdown", msg("team-lead", "hello", at(-time.Minute))},
			want: rowWant{state: model.StateRunning, problem: []string{"inboxes/worker.json", "message 0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			lead := sleeper(t)
			s.session(lead.Process.Pid, leadID, "busy", nil)
			pane := "in-process"
			if tt.backend == "tmux" {
				pane = "%9999"
			}
			cfg := s.write("teams/session-9a8b7c6d/config.json", map[string]any{"leadSessionId": leadID, "members": []any{
				map[string]any{"agentId": "team-lead@t", "name": "team-lead", "agentType": "team-lead", "tmuxPaneId": ""},
				map[string]any{"agentId": "worker@t", "name": "worker", "agentType": "general-purpose", "tmuxPaneId": pane,
					"backendType": tt.backend, "isActive": true, "joinedAt": time.Now().Add(-30 * time.Second).UnixMilli()}}})
			if tt.lead != nil {
				s.write("teams/session-9a8b7c6d/inboxes/team-lead.json", tt.lead)
			}
			if tt.own != nil {
				s.write("teams/session-9a8b7c6d/inboxes/worker.json", tt.own)
			}
			facts := Source{SocketDir: t.TempDir()}.Read(s.dir, time.Now())
			var n *model.Node
			for _, c := range facts.Nodes {
				liveness.ClassifyNode(c, liveness.SystemProbe{}, time.Now(), Source{}.Thresholds())
				if c.HeartbeatPath == cfg+"#worker" {
					n = c
				}
			}
			tt.want.pid = -1
			if tt.want.problem != nil {
				// The problem names the inbox, not the member's key.
				found := false
				for _, p := range facts.Problems {
					ok := true
					for _, w := range tt.want.problem {
						ok = ok && strings.Contains(p.Path+" "+p.Error, w)
					}
					found = found || ok
				}
				if !found {
					t.Errorf("no problem with %q: %v", tt.want.problem, facts.Problems)
				}
				tt.want.problem = nil
				facts.Problems = nil
			}
			tt.want.check(t, n, facts)
			if tt.field != "" {
				shown := ""
				for _, f := range n.SourceFields() {
					shown += f.Name + " " + f.Value + "; "
				}
				if !strings.Contains(shown, tt.field) {
					t.Errorf("fields %s, want %q", shown, tt.field)
				}
			}
		})
	}
}
