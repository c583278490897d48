package wrap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// fakeProbe answers Lookup from a table.
type fakeProbe map[int]liveness.ProcessInfo

func (f fakeProbe) Lookup(pid int) liveness.ProcessInfo { return f[pid] }

func TestParentDeadFollowsTheLivenessRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	started := now.Add(-time.Hour)
	th := model.DefaultThresholds() // stale 120s, exit grace 5s, tolerance 2s
	alive := liveness.ProcessInfo{Exists: true, CreateTime: started}
	reused := liveness.ProcessInfo{Exists: true, CreateTime: started.Add(time.Minute)}
	unverified := liveness.ProcessInfo{Exists: true, CreateTimeErr: errors.New("permission denied")}
	tests := []struct {
		name       string
		body       string // "" means no heartbeat file
		age        time.Duration
		probe      fakeProbe
		noPidCheck bool
		watched    time.Duration
		want       bool
	}{
		{name: "fresh and alive", age: 10 * time.Second, probe: fakeProbe{10: alive}, want: false},
		{name: "stale but alive as the same process is stalled, not dead", age: 10 * time.Minute, probe: fakeProbe{10: alive}, want: false},
		{name: "stale and gone", age: 10 * time.Minute, probe: fakeProbe{}, want: true},
		{name: "gone, older than exit grace", age: 6 * time.Second, probe: fakeProbe{}, want: true},
		{name: "gone but within exit grace: a finalize may be in flight", age: 2 * time.Second, probe: fakeProbe{}, want: false},
		{name: "pid reused by another process", age: 10 * time.Second, probe: fakeProbe{10: reused}, want: true},
		{name: "create time unreadable counts as alive", age: 10 * time.Minute, probe: fakeProbe{10: unverified}, want: false},
		{name: "no pid and stale", body: `{"pid": 0, "status": "running"}`, age: 10 * time.Minute, want: true},
		{name: "no pid, fresh", body: `{"pid": 0, "status": "running"}`, age: 10 * time.Second, want: false},
		{name: "unparseable and stale", body: `{"pid":`, age: 10 * time.Minute, want: true},
		{name: "no-pid-check: stale is dead even if alive", age: 10 * time.Minute, probe: fakeProbe{10: alive}, noPidCheck: true, want: true},
		{name: "finished parent is not dead: the child is not ended", body: fmt.Sprintf(`{"pid": 10, "started": %d, "status": "withdrawn"}`, started.Unix()), age: 10 * time.Minute, probe: fakeProbe{}, want: false},
		{name: "completed parent is not dead: the child is not ended", body: fmt.Sprintf(`{"pid": 10, "started": %d, "status": "completed"}`, started.Unix()), age: 10 * time.Second, probe: fakeProbe{10: alive}, want: false},
		{name: "no heartbeat yet, just started watching", body: "", watched: 10 * time.Second, want: false},
		{name: "no heartbeat for longer than stale", body: "", watched: 10 * time.Minute, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".heartbeat")
			body := tt.body
			if body == "" && tt.watched == 0 {
				body = fmt.Sprintf(`{"pid": 10, "parent_heartbeat": "", "role": "lead", "started": %d, "status": "running"}`, started.Unix())
			}
			if body != "" {
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				mtime := now.Add(-tt.age)
				if err := os.Chtimes(path, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			th := th
			th.NoPidCheck = tt.noPidCheck
			got, why := parentDead(path, tt.probe, th, now, now.Add(-tt.watched))
			if got != tt.want {
				t.Errorf("dead = %v (%s), want %v", got, why, tt.want)
			}
			if got && why == "" {
				t.Error("a dead parent needs a reason")
			}
		})
	}
}
