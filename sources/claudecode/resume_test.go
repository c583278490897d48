package claudecode

import (
	"strconv"
	"testing"
	"time"
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
