package claudecode

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §5.2: a session Claude Code can resume (a sessionId, an absolute
// cwd) has a dir of dispatchtop's own under the root's journal dir, never
// in the store's files nor in its cwd; one it cannot resume has none, and
// resume is refused for it as for any record without a dir.
func TestSessionResumeDirOnlyWhereClaudeCodeCanResume(t *testing.T) {
	cases := []struct {
		name  string
		extra map[string]any
		want  bool
	}{
		{"a sessionId and an absolute cwd", nil, true},
		{"no cwd", map[string]any{"cwd": nil}, false},
		{"a relative cwd", map[string]any{"cwd": "webapp"}, false},
		{"no sessionId", map[string]any{"sessionId": nil}, false},
		{"a sessionId that is a path", map[string]any{"sessionId": "../x"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			pid := gonePID(t)
			rec := map[string]any{"pid": pid, "sessionId": "8e0f9a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b", "cwd": "/home/u/webapp",
				"startedAt": time.Now().UnixMilli(), "status": "idle"} // the process is gone: no procStart to read
			for k, v := range c.extra {
				if v == nil {
					delete(rec, k)
				} else {
					rec[k] = v
				}
			}
			s.write("sessions/"+strconv.Itoa(pid)+".json", rec)
			facts := Source{}.Read(s.dir, time.Now())
			if len(facts.Nodes) != 1 {
				t.Fatalf("%d nodes, want the session's", len(facts.Nodes))
			}
			n := facts.Nodes[0]
			want := ""
			if c.want {
				want = ResumeDir(s.dir, "8e0f9a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b")
			}
			if n.InfraDir != want {
				t.Errorf("infra dir %q, want %q", n.InfraDir, want)
			}
		})
	}
}

// SPEC §5.2, docs/sources.md Claude Code: once a session is resumed, the
// file its killed process left beside the new one is finished ("resumed
// as" the new one) and has no dir, so it is never offered resume again;
// an older file whose process lives is judged by its pid, and of two
// dead files the newest stays the one to resume.
func TestResumedSessionSupersedesTheFileLeftBehind(t *testing.T) {
	const id = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	tests := []struct {
		name                 string
		oldLives, newLives   bool
		wantOld, wantNew     model.State
		oldDir, newDir, ends bool
	}{
		{"the old gone, the new running: the old finished", false, true, model.StateFinished, model.StateRunning, false, true, true},
		{"both running: each by its pid", true, true, model.StateRunning, model.StateRunning, true, true, false},
		{"both gone: the old finished, the new dead and resumable", false, false, model.StateFinished, model.StateDead, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			// A live process's file carries its real start; a gone one's,
			// the time given.
			write := func(lives bool, started time.Time) string {
				p := gonePID(t)
				if lives {
					p = sleeper(t).Process.Pid
					st, err := protocol.ProcessStarted(p)
					if err != nil {
						t.Fatal(err)
					}
					started = time.UnixMilli(int64(st * 1000))
				}
				return s.write("sessions/"+strconv.Itoa(p)+".json", map[string]any{"pid": p, "sessionId": id, "cwd": "/home/u/webapp",
					"status": "idle", "startedAt": started.UnixMilli(), "updatedAt": started.UnixMilli()})
			}
			oldKey := write(tt.oldLives, time.Now().Add(-2*time.Hour))
			time.Sleep(20 * time.Millisecond) // the new one starts after
			newKey := write(tt.newLives, time.Now().Add(-time.Minute))
			nodes, _ := read(t, s.dir, time.Now().Add(Source{}.Thresholds().ExitGrace+time.Second))
			old, nw := nodes[oldKey], nodes[newKey]
			if old.State != tt.wantOld || nw.State != tt.wantNew {
				t.Fatalf("old %s (%s), new %s (%s); want %s, %s", old.State, old.Reason, nw.State, nw.Reason, tt.wantOld, tt.wantNew)
			}
			if (old.InfraDir != "") != tt.oldDir || (nw.InfraDir != "") != tt.newDir {
				t.Errorf("dirs old %q new %q", old.InfraDir, nw.InfraDir)
			}
			if ends := strings.Contains(old.Ending(), "resumed as "+newKey); ends != tt.ends {
				t.Errorf("old's ending %q", old.Ending())
			}
		})
	}
}
