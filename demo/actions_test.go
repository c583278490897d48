package demo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// nodeAt finds the node of a scenario id in a snapshot.
func nodeAt(f *Fleet, nodes []onceNode, id string) *onceNode {
	want := filepath.Join(f.Dir(), filepath.FromSlash(id))
	for i := range nodes {
		if nodes[i].InfraDir == want {
			return &nodes[i]
		}
	}
	return nil
}

// waitFor polls snapshots until cond holds for the node, or fails.
func waitFor(t *testing.T, f *Fleet, id, what string, timeout time.Duration, cond func(n *onceNode) bool) *onceNode {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last *onceNode
	for time.Now().Before(deadline) {
		last = nodeAt(f, snapshot(t, f), id)
		if last != nil && cond(last) {
			return last
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not %s after %s (last: %+v)", id, what, timeout, last)
	return nil
}

// act runs one action through the recovery engine (the one the dashboard
// and the subcommands share), with the demo's config.
func act(t *testing.T, f *Fleet, action model.Action, id string) actions.Result {
	t.Helper()
	cfg, _, err := actions.LoadConfig(f.ConfigPath(), f.Roots())
	if err != nil {
		t.Fatal(err)
	}
	engine := actions.New(actions.EngineOptions{
		Scan: scanner.Options{
			Roots: f.Roots(), Thresholds: Thresholds(), Probe: liveness.SystemProbe{}, Now: time.Now,
		},
		Config: cfg,
	})
	res, err := engine.Run(context.Background(), actions.Request{
		Action: action, Node: filepath.Join(f.Dir(), filepath.FromSlash(id)), Grace: time.Second,
	})
	if err != nil || res.Refused || res.Outcome != actions.OutcomeDone {
		t.Fatalf("%s %s: %v; result %+v", action, id, err, res)
	}
	return res
}

func hasFlag(n *onceNode, flag string) bool {
	for _, f := range n.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// The demo's config wires resume and merge to the fleet's own commands, so
// every recommended action works for real on it (SPEC §7).
func TestDemoActionsWorkForReal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	s1 := protocol.SessionsRoot + "/20261122-090000"
	frozen := s1 + "/testing/20261122-090110"
	crashed := protocol.JobsRoot + "/job-102--migrate-schema"
	completed := protocol.SessionsRoot + "/20261122-093000"

	waitFor(t, f, frozen, "a kill candidate", 40*time.Second, func(n *onceNode) bool { return n.Action == "kill" })
	act(t, f, model.ActionKill, frozen)
	waitFor(t, f, frozen, "dead after kill", 10*time.Second, func(n *onceNode) bool { return n.State == "dead" })

	before := waitFor(t, f, crashed, "dead with resume", 10*time.Second, func(n *onceNode) bool { return n.Action == "resume" })
	act(t, f, model.ActionResume, crashed)
	after := waitFor(t, f, crashed, "running again", 10*time.Second, func(n *onceNode) bool {
		return n.State == "running" && !hasFlag(n, "starting")
	})
	if before.PID != nil && after.PID != nil && *before.PID == *after.PID {
		t.Errorf("resumed node still names the old pid %d", *after.PID)
	}

	waitFor(t, f, completed, "offered merge", 10*time.Second, func(n *onceNode) bool { return n.Action == "merge" })
	act(t, f, model.ActionMerge, completed)
	log, err := os.ReadFile(f.MergeLogPath())
	if err != nil || !strings.Contains(string(log), "merged") {
		t.Errorf("merge log %q (%v), want a line for %s", log, err, completed)
	}
	waitFor(t, f, completed, "merged", 10*time.Second, func(n *onceNode) bool { return n.Action == "none" })

	waitFor(t, f, s1, "offered compact", 10*time.Second, func(n *onceNode) bool { return n.Action == "compact" })
	act(t, f, model.ActionCompact, s1)
	registry, err := os.ReadFile(filepath.Join(f.Dir(), filepath.FromSlash(s1), ".children"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(registry), "/docs/") {
		t.Errorf("compact kept the never-started registration:\n%s", registry)
	}
	if !strings.Contains(string(registry), "/coding/") {
		t.Errorf("compact dropped a live child:\n%s", registry)
	}

	// The resumed dispatch was started by the engine, not the fleet: Stop
	// must still end it.
	if err := f.Stop(); err != nil {
		t.Error(err)
	}
	if pid := after.PID; pid != nil && !pidGone(*pid) {
		t.Errorf("resumed agent %d still alive after Stop", *pid)
	}
	if alive := f.liveAgents(); len(alive) > 0 {
		t.Errorf("agents alive after Stop: %v", alive)
	}
}
