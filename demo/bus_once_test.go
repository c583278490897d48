package demo

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// sourceNode is a dispatchtop/v1 node with its source.
type sourceNode struct {
	InfraDir string       `json:"infra_dir"`
	Source   string       `json:"source"`
	Key      string       `json:"heartbeat"`
	State    string       `json:"state"`
	Children []sourceNode `json:"children"`
}

// SPEC §7: `make demo` shows, next to the file protocol's sessions, job
// 103, whose workers live in its TeaParty bus: `dispatchtop --once --json`
// over the roots the demo command watches shows the job's lead (a
// heartbeat) with its three workers (bus rows) under it — two running, the
// third running and then finished — beside the `.sessions` leads and the
// `.teaparty` jobs the file protocol reads.
func TestDemoShowsJob103sBusWorkersBesideTheFileProtocolSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	lead := filepath.Join(f.Dir(), filepath.FromSlash(protocol.JobsRoot), "job-103--upgrade-deps")
	want := map[string][]string{ // worker session id → the states it must show
		"20261122-100010": {"running"},
		"20261122-100020": {"running"},
		"20261122-100030": {"running", "finished"},
	}
	seen := map[string]map[string]bool{}
	nativeSessions := map[string]bool{}
	var stray []string
	args := []string{"--once", "--json", "--fail-on", "none", "--config", f.ConfigPath()}
	for _, r := range f.Roots() {
		args = append(args, "--root", r)
	}
	missing := func() []string {
		var out []string
		for sid, states := range want {
			for _, st := range states {
				if !seen[sid][st] {
					out = append(out, sid+" "+st)
				}
			}
		}
		for _, s := range []string{protocol.SessionsRoot + "/20261122-090000", protocol.JobsRoot + "/job-101--refactor-parser", protocol.JobsRoot + "/job-103--upgrade-deps"} {
			if !nativeSessions[s] {
				out = append(out, "the native session "+s)
			}
		}
		sort.Strings(out)
		return out
	}
	for began := time.Now(); time.Since(began) < 25*time.Second && len(missing()) > 0; time.Sleep(250 * time.Millisecond) {
		out, stderr, code := runBinary(t, f, args...)
		if code != 0 {
			t.Fatalf("--once exit %d: %s", code, stderr)
		}
		var doc struct {
			Sessions []sourceNode `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("--once --json: %v", err)
		}
		for _, s := range doc.Sessions {
			if rel, err := filepath.Rel(f.Dir(), s.InfraDir); err == nil && s.Source == "native" {
				nativeSessions[filepath.ToSlash(rel)] = true
			}
			if s.InfraDir != lead {
				continue
			}
			for _, c := range s.Children {
				sid := filepath.Base(c.InfraDir)
				if c.Source != "teaparty" || !strings.HasSuffix(c.Key, "#dispatch:"+sid) || want[sid] == nil {
					stray = append(stray, c.Source+" "+c.Key)
					continue
				}
				if seen[sid] == nil {
					seen[sid] = map[string]bool{}
				}
				seen[sid][c.State] = true
			}
		}
	}
	if miss := missing(); len(miss) > 0 {
		t.Errorf("the demo has not shown:\n  %s", strings.Join(miss, "\n  "))
	}
	if len(stray) > 0 {
		t.Errorf("under job 103's lead, nodes that are none of its bus workers: %v", stray)
	}
}
