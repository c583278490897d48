package actions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// benchFleet writes sessions × perSession finished nodes (each session a
// lead with its workers registered), plus dead, resumable sessions.
func benchFleet(b *testing.B, sessions, perSession, dead int) string {
	b.Helper()
	root := b.TempDir()
	hb := func(dir, parent, status string) {
		os.MkdirAll(dir, 0o755)
		p := ""
		if parent != "" {
			p = filepath.Join(parent, ".heartbeat")
		}
		os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte(fmt.Sprintf(`{"pid":0,"parent_heartbeat":%q,"role":"r","started":1,"status":%q}`, p, status)), 0o644)
	}
	for s := 0; s < sessions; s++ {
		lead := filepath.Join(root, fmt.Sprintf("s%04d", s))
		hb(lead, "", "completed")
		var reg strings.Builder
		for w := 1; w < perSession; w++ {
			dir := filepath.Join(lead, "team", fmt.Sprintf("w%02d", w))
			hb(dir, lead, "completed")
			fmt.Fprintf(&reg, `{"heartbeat":%q,"team":"team","task_id":"%d","status":"active"}`+"\n", filepath.Join(dir, ".heartbeat"), w)
		}
		os.WriteFile(filepath.Join(lead, ".children"), []byte(reg.String()), 0o644)
	}
	old := time.Now().Add(-time.Hour)
	for d := 0; d < dead; d++ {
		dir := filepath.Join(root, fmt.Sprintf("zdead%03d", d))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, ".heartbeat"), []byte(`{"pid":999999,"parent_heartbeat":"","role":"r","started":1,"status":"running"}`), 0o644)
		os.Chtimes(filepath.Join(dir, ".heartbeat"), old, old)
	}
	return root
}

// BenchmarkActionOn10kNodes: one action (a resume dry run) re-reads the
// whole forest it acts in; this is what that costs at 10,000 nodes.
func BenchmarkActionOn10kNodes(b *testing.B) {
	root := benchFleet(b, 1000, 10, 1)
	e := testEngine(root, model.Thresholds{}, Config{Resume: CommandConfig{Argv: []string{"true"}}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.DryRun(context.Background(), Request{Action: model.ActionResume, Node: "zdead000"})
		if err != nil || res.Outcome != OutcomeDryRun {
			b.Fatalf("%v %s %q", err, res.Outcome, res.Message)
		}
	}
}

// BenchmarkActionWithHintOn10kNodes: the same action from a caller that
// holds a snapshot (the TUI): only the node's session is re-read.
func BenchmarkActionWithHintOn10kNodes(b *testing.B) {
	root := benchFleet(b, 1000, 10, 1)
	e := testEngine(root, model.Thresholds{}, Config{Resume: CommandConfig{Argv: []string{"true"}}})
	hint, err := e.scan(e.opts.Scan)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.RunWithHint(context.Background(), Request{Action: model.ActionResume, Node: "zdead000", DryRun: true}, hint)
		if err != nil || res.Outcome != OutcomeDryRun {
			b.Fatalf("%v %s %q", err, res.Outcome, res.Message)
		}
	}
}

// BenchmarkRecoverPlan10kNodes: recover's dry run over 10,000 nodes with
// 100 steps (50 resumes; finished sessions to merge): one full scan for the
// plan, then each step re-reads only its own session.
func BenchmarkRecoverPlan10kNodes(b *testing.B) {
	root := benchFleet(b, 1000, 10, 50)
	cfg := Config{Resume: CommandConfig{Argv: []string{"true"}}, Merge: CommandConfig{Argv: []string{"true"}}}
	e := testEngine(root, model.Thresholds{}, cfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		results, err := e.Recover(context.Background(), false, false)
		if err != nil || len(results) < 50 {
			b.Fatalf("%v, %d results", err, len(results))
		}
		b.ReportMetric(float64(len(results)), "steps")
	}
}

// BenchmarkCompact100kLineRegistry: compaction of a 100,000-line registry
// that drops every other line.
func BenchmarkCompact100kLineRegistry(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, ".children")
	var content strings.Builder
	for i := 0; i < 100000; i++ {
		status := "active"
		if i%2 == 0 {
			status = "drop"
		}
		fmt.Fprintf(&content, `{"heartbeat":"/nowhere/%06d/.heartbeat","team":"t","task_id":"%d","status":%q}`+"\n", i, i, status)
	}
	e := testEngine(dir, model.Thresholds{}, Config{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.WriteFile(path, []byte(content.String()), 0o644)
		b.StartTimer()
		got, err := e.compactFile(context.Background(), path, dropMarked, nil)
		if err != nil || len(got.removed) != 50000 {
			b.Fatalf("%v, removed %d", err, len(got.removed))
		}
	}
}
