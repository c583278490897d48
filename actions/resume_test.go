package actions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// deadNode writes a session `s` whose process is gone and whose beat is ten
// minutes old, in CfA state cfa: dead, and resumable unless cfa says not.
func deadNode(t *testing.T, root, cfa string) string {
	t.Helper()
	return writeNode(t, root, nodeSpec{dir: "s", pid: testproc.Gone(t), started: float64(time.Now().Add(-time.Hour).Unix()), status: "running", age: 10 * time.Minute, cfa: cfa})
}

// dispatches reads the lines the argv helper wrote: one per started command.
func dispatches(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var argv []string
		if err := json.Unmarshal([]byte(line), &argv); err != nil {
			t.Fatalf("argv line %q: %v", line, err)
		}
		out = append(out, argv)
	}
	return out
}

func resumeConfig(out string) Config {
	return Config{Resume: CommandConfig{Argv: helperArgv("argv", out, "{id}", "{cfa_state}")}}
}

// SPEC §5.2: resume bumps the retry count and starts resume.argv detached.
func TestResumeStartsTheCommandAndBumpsTheRetryCount(t *testing.T) {
	root := t.TempDir()
	infra := deadNode(t, root, "EXECUTE")
	out := filepath.Join(t.TempDir(), "argv")
	res, err := testEngine(root, model.Thresholds{}, resumeConfig(out)).Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone {
		t.Fatalf("resume: %s: %s", res.Outcome, res.Message)
	}
	if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) == 1 }) {
		t.Fatalf("the resume command did not run once: %v", dispatches(t, out))
	}
	if got := dispatches(t, out)[0]; strings.Join(got, " ") != "s EXECUTE" {
		t.Fatalf("resume argv %q", got)
	}
	var rc model.RetryCount
	b, _ := os.ReadFile(filepath.Join(infra, ".retry-count"))
	if err := json.Unmarshal(b, &rc); err != nil || rc.Total != 1 || rc.ByPhase["EXECUTE"] != 1 {
		t.Fatalf(".retry-count %s (%v)", b, err)
	}
	var marker model.ResumePending
	b, _ = os.ReadFile(filepath.Join(infra, ".resume-pending"))
	if err := json.Unmarshal(b, &marker); err != nil || marker.PID != os.Getpid() || marker.User == "" || marker.Time.IsZero() {
		t.Fatalf(".resume-pending %s (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(infra, ".resume.log")); err != nil {
		t.Fatalf("no .resume.log: %v", err)
	}
	js := journalFor(t, root, "s")
	if len(js) != 1 || js[0].Outcome != OutcomeDone || js[0].Action != model.ActionResume {
		t.Fatalf("journal: %+v", js)
	}
}

// SPEC §5.2: two dashboards pressing resume at once dispatch once — here
// eight engines racing in goroutines, and two separate processes.
func TestConcurrentResumesDispatchExactlyOnce(t *testing.T) {
	t.Run("goroutines", func(t *testing.T) {
		root := t.TempDir()
		deadNode(t, root, "EXECUTE")
		out := filepath.Join(t.TempDir(), "argv")
		var wg sync.WaitGroup
		results := make([]Result, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := testEngine(root, model.Thresholds{}, resumeConfig(out)).Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
				if err != nil {
					t.Error(err)
				}
				results[i] = r
			}()
		}
		wg.Wait()
		done := 0
		for _, r := range results {
			switch {
			case r.Outcome == OutcomeDone:
				done++
			case r.Refused && strings.Contains(r.Message, "already pending since"):
			default:
				t.Fatalf("unexpected result %s: %s", r.Outcome, r.Message)
			}
		}
		if done != 1 {
			t.Fatalf("%d resumes went through, want 1", done)
		}
		time.Sleep(300 * time.Millisecond)
		if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) >= 1 }) || len(dispatches(t, out)) != 1 {
			t.Fatalf("dispatched %d times, want once", len(dispatches(t, out)))
		}
		if n := len(journalFor(t, root, "s")); n != len(results) {
			t.Fatalf("journal holds %d lines, want one per attempt (%d)", n, len(results))
		}
	})
	t.Run("processes", func(t *testing.T) {
		root := t.TempDir()
		deadNode(t, root, "EXECUTE")
		out := filepath.Join(t.TempDir(), "argv")
		args := append([]string{root, "s"}, helperArgv("argv", out, "{id}")...)
		a, b := helperCmd("resume", args...), helperCmd("resume", args...)
		var outA, outB strings.Builder
		a.Stdout, b.Stdout = &outA, &outB
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		if err := a.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := b.Wait(); err != nil {
			t.Fatal(err)
		}
		both := outA.String() + outB.String()
		if strings.Count(both, "done:") != 1 || strings.Count(both, "already pending since") != 1 {
			t.Fatalf("two processes resuming: %q", both)
		}
		time.Sleep(300 * time.Millisecond)
		if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) >= 1 }) || len(dispatches(t, out)) != 1 {
			t.Fatalf("dispatched %d times, want once", len(dispatches(t, out)))
		}
	})
}

// SPEC §5.2: resume's refusals — not dead, terminal failure, spent budgets,
// a pending resume, no command configured, a newline in a placeholder.
func TestResumeRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) // after deadNode
		cfa   string
		cfg   func(out string) Config
		want  string
	}{
		{name: "running node", cfa: "EXECUTE", want: "not dead", setup: func(t *testing.T, root string) {
			p := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "s", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running", cfa: "EXECUTE"})
		}},
		{name: "CfA FAILURE is terminal", cfa: "FAILURE", want: "terminal failure"},
		{name: "CfA WITHDRAWN is terminal", cfa: "WITHDRAWN", want: "terminal failure"},
		{name: "nine retries spent", cfa: "EXECUTE", want: "retry budget spent", setup: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "s", ".retry-count"), []byte(`{"total":9,"by_phase":{"PLAN":9}}`), 0o644)
		}},
		{name: "a bare integer means total", cfa: "EXECUTE", want: "retry budget spent", setup: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "s", ".retry-count"), []byte("9\n"), 0o644)
		}},
		{name: "three retries spent in this CfA state", cfa: "EXECUTE", want: "3 of 3 in EXECUTE", setup: func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "s", ".retry-count"), []byte(`{"total":3,"by_phase":{"EXECUTE":3}}`), 0o644)
		}},
		{name: "a resume already pending", cfa: "EXECUTE", want: "already pending since", setup: func(t *testing.T, root string) {
			writeJSON(t, filepath.Join(root, "s", ".resume-pending"), map[string]any{"pid": 1, "time": time.Now().UTC(), "user": "someone"})
		}},
		{name: "no resume command configured", cfa: "EXECUTE", want: "resume.argv", cfg: func(string) Config { return Config{} }},
		{name: "a newline in a placeholder value", cfa: "EXECUTE", want: "NUL or newline", setup: func(t *testing.T, root string) {
			hb := filepath.Join(root, "s", ".heartbeat")
			var m map[string]any
			b, _ := os.ReadFile(hb)
			json.Unmarshal(b, &m)
			m["task_id"] = "two\nlines"
			writeJSON(t, hb, m)
			age(t, hb, 10*time.Minute)
		}, cfg: func(out string) Config {
			return Config{Resume: CommandConfig{Argv: helperArgv("argv", out, "{task_id}")}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			deadNode(t, root, tc.cfa)
			if tc.setup != nil {
				tc.setup(t, root)
			}
			out := filepath.Join(t.TempDir(), "argv")
			cfg := resumeConfig(out)
			if tc.cfg != nil {
				cfg = tc.cfg(out)
			}
			before := treeHash(t, filepath.Join(root, "s"))
			res, err := testEngine(root, model.Thresholds{}, cfg).Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Refused || !strings.Contains(res.Message, tc.want) {
				t.Fatalf("got refused=%v %q, want a refusal saying %q", res.Refused, res.Message, tc.want)
			}
			if treeHash(t, filepath.Join(root, "s")) != before {
				t.Fatalf("a refused resume changed the node's files")
			}
			time.Sleep(100 * time.Millisecond)
			if d := dispatches(t, out); len(d) != 0 {
				t.Fatalf("a refused resume dispatched %v", d)
			}
			js := journalFor(t, root, "s")
			if len(js) != 1 || js[0].Outcome != OutcomeRefused {
				t.Fatalf("journal for the refusal: %+v", js)
			}
		})
	}
}

// SPEC §5.2: --force overrides the budget (only the budget), and says so.
func TestResumeForceOverridesOnlyTheBudget(t *testing.T) {
	root := t.TempDir()
	infra := deadNode(t, root, "EXECUTE")
	os.WriteFile(filepath.Join(infra, ".retry-count"), []byte(`{"total":9,"by_phase":{"EXECUTE":3}}`), 0o644)
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, resumeConfig(out))
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeDone || !strings.Contains(res.Message, "--force") {
		t.Fatalf("forced resume: %s: %s", res.Outcome, res.Message)
	}
	js := journalFor(t, root, "s")
	if len(js) != 1 || !js[0].Force {
		t.Fatalf("the journal does not say the budget was overridden: %+v", js)
	}
	b, _ := os.ReadFile(filepath.Join(infra, ".retry-count"))
	if !strings.Contains(string(b), `"total":10`) {
		t.Fatalf(".retry-count after a forced resume: %s", b)
	}
	if !waitFor(10*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
		t.Fatalf("the forced resume's command did not run: no %s", out) // and its dir is not removed under it
	}
	// Force does not override a pending resume.
	res, err = e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Refused || !strings.Contains(res.Message, "already pending") {
		t.Fatalf("forced resume over a pending one: %s", res.Message)
	}
	// Nor a terminal failure.
	writeJSON(t, filepath.Join(infra, ".cfa-state.json"), map[string]any{"state": "FAILURE"})
	os.Remove(filepath.Join(infra, ".resume-pending"))
	res, _ = e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s", Force: true})
	if !res.Refused || !strings.Contains(res.Message, "terminal failure") {
		t.Fatalf("forced resume of a terminal failure: %s", res.Message)
	}
}

// SPEC §5.2: a marker stops counting once the node beat after it was written
// or once it is older than stale; an expired marker is replaced.
func TestExpiredResumeMarkerIsReplaced(t *testing.T) {
	tests := []struct {
		name             string
		markerAge, beatT time.Duration
	}{
		{name: "older than stale", markerAge: 10 * time.Minute, beatT: 20 * time.Minute},
		{name: "the node beat since", markerAge: 90 * time.Second, beatT: 30 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			infra := deadNode(t, root, "EXECUTE")
			age(t, filepath.Join(infra, ".heartbeat"), tc.beatT)
			marker := filepath.Join(infra, ".resume-pending")
			writeJSON(t, marker, map[string]any{"pid": 1, "time": time.Now().Add(-tc.markerAge).UTC(), "user": "earlier"})
			age(t, marker, tc.markerAge)
			out := filepath.Join(t.TempDir(), "argv")
			res, err := testEngine(root, model.Thresholds{}, resumeConfig(out)).Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeDone {
				t.Fatalf("resume over an expired marker: %s: %s", res.Outcome, res.Message)
			}
			b, _ := os.ReadFile(marker)
			if strings.Contains(string(b), "earlier") {
				t.Fatalf("the expired marker was not replaced: %s", b)
			}
			if left, _ := filepath.Glob(marker + ".expired-*"); len(left) != 0 {
				t.Fatalf("set-aside markers left: %v", left)
			}
			// The command runs detached: its argv lands in a dir of this
			// test, which must not be removed while it is being written.
			if !waitFor(10*time.Second, func() bool { _, err := os.Stat(out); return err == nil }) {
				t.Fatalf("the resume command did not run: no %s", out)
			}
		})
	}
}

// SPEC §9: a resume killed at any step leaves .retry-count as it was or as
// intended (never partial), and its marker holds off a second dispatch
// until it expires.
func TestResumeKilledAtEveryStepLeavesFilesWhole(t *testing.T) {
	errKilled := errors.New("killed")
	for _, step := range []string{"resume:claimed", "resume:bumped"} {
		t.Run(step, func(t *testing.T) {
			root := t.TempDir()
			infra := deadNode(t, root, "EXECUTE")
			os.WriteFile(filepath.Join(infra, ".retry-count"), []byte(`{"total":1,"by_phase":{"EXECUTE":1}}`), 0o644)
			out := filepath.Join(t.TempDir(), "argv")
			e := testEngine(root, model.Thresholds{}, resumeConfig(out))
			e.hook = func(s string) error {
				if s == step {
					return errKilled
				}
				return nil
			}
			if _, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"}); !errors.Is(err, errKilled) {
				t.Fatalf("resume did not stop at %s: %v", step, err)
			}
			b, _ := os.ReadFile(filepath.Join(infra, ".retry-count"))
			if s := string(b); s != `{"total":1,"by_phase":{"EXECUTE":1}}` && strings.TrimSpace(s) != `{"total":2,"by_phase":{"EXECUTE":2}}` {
				t.Fatalf(".retry-count after a kill at %s: %q", step, s)
			}
			if left, _ := filepath.Glob(filepath.Join(infra, ".retry-count*")); len(left) != 1 {
				t.Fatalf("temp files left beside .retry-count: %v", left)
			}
			e.hook = nil
			res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Refused || !strings.Contains(res.Message, "already pending") {
				t.Fatalf("a resume after a killed one: %s %q", res.Outcome, res.Message)
			}
			time.Sleep(100 * time.Millisecond)
			if d := dispatches(t, out); len(d) != 0 {
				t.Fatalf("dispatched %v", d)
			}
		})
	}
}

// SPEC §5.2: two dashboards pressing resume at once dispatch once — also
// when the second read the node as dead before the first resume took and
// claims only after the resumed agent beat (which expires the first's
// marker): the node is no longer what was judged dead, and nothing runs.
func TestResumeOfANodeThatBeatSinceItWasReadDispatchesNothing(t *testing.T) {
	tests := []struct {
		name string
		beat func(t *testing.T, root, infra string)
	}{
		{name: "the resumed agent rewrote the heartbeat", beat: func(t *testing.T, root, infra string) {
			p := startHelper(t, "sleep")
			writeNode(t, root, nodeSpec{dir: "s", pid: p.Process.Pid, started: testproc.Started(t, p.Process.Pid), status: "running", cfa: "EXECUTE"})
		}},
		{name: "the heartbeat's mtime was bumped", beat: func(t *testing.T, root, infra string) {
			now := time.Now()
			if err := os.Chtimes(filepath.Join(infra, ".heartbeat"), now, now); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			infra := deadNode(t, root, "EXECUTE")
			out := filepath.Join(t.TempDir(), "argv")
			// B reads the node now, while it is dead, and acts later.
			b := testEngine(root, model.Thresholds{}, resumeConfig(out))
			before, err := b.scan(b.opts.Scan)
			if err != nil {
				t.Fatal(err)
			}
			b.scan = func(scanner.Options) (*model.Snapshot, error) { return before, nil }

			a := testEngine(root, model.Thresholds{}, resumeConfig(out))
			if res, err := a.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"}); err != nil || res.Outcome != OutcomeDone {
				t.Fatalf("first resume: %v %s %q", err, res.Outcome, res.Message)
			}
			if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) == 1 }) {
				t.Fatal("the first resume did not dispatch")
			}
			markerA, _ := os.ReadFile(filepath.Join(infra, ".resume-pending"))
			time.Sleep(10 * time.Millisecond)
			tc.beat(t, root, infra)

			res, err := b.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Refused || !strings.Contains(res.Message, "beat since") {
				t.Fatalf("second resume: %s %q, want a refusal", res.Outcome, res.Message)
			}
			time.Sleep(200 * time.Millisecond)
			if d := dispatches(t, out); len(d) != 1 {
				t.Fatalf("dispatched %d times, want once: %v", len(d), d)
			}
			b2, _ := os.ReadFile(filepath.Join(infra, ".retry-count"))
			if !strings.Contains(string(b2), `"total":1`) {
				t.Fatalf(".retry-count bumped twice: %s", b2)
			}
			if m, err := os.ReadFile(filepath.Join(infra, ".resume-pending")); err == nil && string(m) != string(markerA) {
				t.Fatalf("the refused resume left its own marker: %s", m)
			}
			js := journalFor(t, root, "s")
			if len(js) != 2 || js[1].Outcome != OutcomeRefused {
				t.Fatalf("journal: %+v", js)
			}
		})
	}
}

// SPEC §5.2: a resume that fails after claiming its marker releases it (a
// failed attempt must not hold off the next one until the marker is stale),
// and its journal line says whether the budget was overridden.
func TestAFailedResumeReleasesItsMarkerAndJournalsForce(t *testing.T) {
	tests := []struct {
		name  string
		hook  func(infra string) func(string) error
		argv0 func(t *testing.T) string
		want  string
	}{
		{name: ".retry-count cannot be written", want: ".retry-count", hook: func(infra string) func(string) error {
			return func(step string) error {
				if step != "resume:claimed" {
					return nil
				}
				// Something else takes the name: the atomic rename cannot replace it.
				os.Remove(filepath.Join(infra, ".retry-count"))
				return os.MkdirAll(filepath.Join(infra, ".retry-count", "in-the-way"), 0o755)
			}
		}},
		{name: "the command cannot start", want: "exec format error", argv0: func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "not-a-program")
			if err := os.WriteFile(p, []byte("\x00\x01garbage"), 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			infra := deadNode(t, root, "EXECUTE")
			os.WriteFile(filepath.Join(infra, ".retry-count"), []byte(`{"total":9,"by_phase":{"EXECUTE":1}}`), 0o644)
			out := filepath.Join(t.TempDir(), "argv")
			cfg := resumeConfig(out)
			if tc.argv0 != nil {
				cfg.Resume.Argv = []string{tc.argv0(t)}
			}
			e := testEngine(root, model.Thresholds{}, cfg)
			if tc.hook != nil {
				e.hook = tc.hook(infra)
			}
			res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s", Force: true})
			if err == nil || res.Outcome != OutcomeFailed || !strings.Contains(res.Message, tc.want) {
				t.Fatalf("resume: %v %s %q, want a failure saying %q", err, res.Outcome, res.Message, tc.want)
			}
			if _, err := os.Stat(filepath.Join(infra, ".resume-pending")); err == nil {
				t.Fatal("the failed resume left its marker")
			}
			js := journalFor(t, root, "s")
			if len(js) != 1 || js[0].Outcome != OutcomeFailed || !js[0].Force {
				t.Fatalf("journal: %+v", js)
			}
		})
	}
}
