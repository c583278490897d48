package actions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
)

// claudeSession is a ~/.claude holding one session file, as Claude Code
// writes it, for the process pid: its store, the session's id and cwd
// (the user's project, a dir of its own outside the store).
type claudeSession struct {
	store, id, cwd, file string
}

func writeClaudeSession(t *testing.T, pid int, started time.Time, status string) claudeSession {
	t.Helper()
	store := filepath.Join(t.TempDir(), ".claude")
	for _, sub := range []string{"sessions", "projects"} {
		if err := os.MkdirAll(filepath.Join(store, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := claudeSession{store: store, id: "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f", cwd: t.TempDir()}
	s.file = filepath.Join(store, "sessions", itoa(pid)+".json")
	ms := float64(started.UnixMilli())
	writeJSON(t, s.file, map[string]any{
		"pid": pid, "sessionId": s.id, "cwd": s.cwd, "startedAt": ms, "kind": "interactive",
		"entrypoint": "cli", "version": "2.1.178", "status": status, "updatedAt": ms, "statusUpdatedAt": ms,
	})
	return s
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func claudeEngine(store string, cfg Config) *Engine {
	return New(EngineOptions{Scan: scanner.Options{Roots: []string{"claude:" + store}, Thresholds: model.DefaultThresholds(),
		Sources: []sources.Source{claudecode.Source{}}}, Config: cfg})
}

// treeSum is every path under dir with its size and mtime: what a write
// anywhere in it would change.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.ModTime().String() + " " + itoa(int(fi.Size())) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// SPEC §5.2, §5.5: a dead Claude Code session (its process gone, its file
// left behind reading idle) resumes with the configured command, run once
// in the session's cwd with {session_id} and {cwd}, under two dashboards
// pressing resume at once; its marker, retry count and log lie in
// dispatchtop's own dir under the root's journal dir, and neither Claude
// Code's files nor the project's are written.
func TestClaudeSessionResumeRunsOnceInItsCwd(t *testing.T) {
	s := writeClaudeSession(t, testproc.Gone(t), time.Now().Add(-time.Hour), "idle")
	before, project := treeSum(t, filepath.Join(s.store, "sessions")), treeSum(t, s.cwd)
	out := filepath.Join(t.TempDir(), "argv")
	cfg := Config{Resume: CommandConfig{Argv: helperArgv("cwd", out, "--resume", "{session_id}", "{cwd}", "{row_id}")}}
	results := make([]Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = claudeEngine(s.store, cfg).Run(context.Background(), Request{Action: model.ActionResume, Node: s.id})
		}()
	}
	wg.Wait()
	done, refused := 0, 0
	for i, res := range results {
		switch {
		case errs[i] == nil && res.Outcome == OutcomeDone:
			done++
		case errs[i] == nil && res.Refused && strings.Contains(res.Message, "already pending"):
			refused++
		default:
			t.Fatalf("resume %d: %s: %s (%v)", i, res.Outcome, res.Message, errs[i])
		}
	}
	if done != 1 || refused != 1 {
		t.Fatalf("%d resumed, %d refused as pending: want one of each", done, refused)
	}
	if !waitFor(5*time.Second, func() bool { return len(dispatches(t, out)) == 1 }) {
		t.Fatalf("the resume command did not run once: %v", dispatches(t, out))
	}
	time.Sleep(100 * time.Millisecond) // a second command would have written by now
	got := dispatches(t, out)
	want := []string{s.cwd, "--resume", s.id, s.cwd, s.id}
	if len(got) != 1 || strings.Join(got[0], "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("the command ran as %q, want once as %q (cwd first)", got, want)
	}
	own := claudecode.ResumeDir(s.store, s.id)
	for _, name := range []string{protocol.ResumePendingFile, protocol.RetryCountFile, protocol.ResumeLogFile} {
		if _, err := os.Stat(filepath.Join(own, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if after := treeSum(t, filepath.Join(s.store, "sessions")); after != before {
		t.Errorf("Claude Code's sessions/ was written:\n%s\nwas\n%s", after, before)
	}
	if after := treeSum(t, s.cwd); after != project {
		t.Errorf("the session's cwd was written:\n%s\nwas\n%s", after, project)
	}
}

// SPEC §5.2: a running Claude Code session is refused, a session with no
// resume command configured is refused naming the key, and a session whose
// cwd is gone has nowhere to resume: each with nothing dispatched and no
// dir made.
func TestClaudeSessionResumeRefusals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "argv")
	configured := Config{Resume: CommandConfig{Argv: helperArgv("cwd", out, "{session_id}")}}
	cases := []struct {
		name  string
		setup func(t *testing.T) claudeSession
		cfg   Config
		want  string
	}{
		{"running", func(t *testing.T) claudeSession {
			p := startHelper(t, "sleep")
			started := time.Unix(0, int64(testproc.Started(t, p.Process.Pid)*1e9))
			return writeClaudeSession(t, p.Process.Pid, started, "idle")
		}, configured, "is running, not dead"},
		{"no command configured", func(t *testing.T) claudeSession {
			return writeClaudeSession(t, testproc.Gone(t), time.Now().Add(-time.Hour), "idle")
		}, Config{}, "resume.argv"},
		{"its cwd gone", func(t *testing.T) claudeSession {
			s := writeClaudeSession(t, testproc.Gone(t), time.Now().Add(-time.Hour), "busy")
			if err := os.Remove(s.cwd); err != nil {
				t.Fatal(err)
			}
			return s
		}, configured, "nowhere to resume it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.setup(t)
			res, err := claudeEngine(s.store, c.cfg).Run(context.Background(), Request{Action: model.ActionResume, Node: s.id})
			if err != nil || !res.Refused || !strings.Contains(res.Message, c.want) {
				t.Fatalf("resume: %s: %s (%v), want refused: %q", res.Outcome, res.Message, err, c.want)
			}
			if _, err := os.Stat(claudecode.ResumeDir(s.store, s.id)); !os.IsNotExist(err) {
				t.Errorf("the session's resume dir was made on a refusal (%v)", err)
			}
			if len(dispatches(t, out)) != 0 {
				t.Error("the command ran")
			}
		})
	}
}

// SPEC §5.5: a dry run of a Claude Code session's resume says where the
// command runs and where its state goes, and makes nothing.
func TestClaudeSessionResumeDryRunMakesNothing(t *testing.T) {
	s := writeClaudeSession(t, testproc.Gone(t), time.Now().Add(-time.Hour), "idle")
	out := filepath.Join(t.TempDir(), "argv")
	cfg := Config{Resume: CommandConfig{Argv: helperArgv("cwd", out, "{session_id}")}}
	res, err := claudeEngine(s.store, cfg).DryRun(context.Background(), Request{Action: model.ActionResume, Node: s.id})
	if err != nil || res.Outcome != OutcomeDryRun {
		t.Fatalf("dry run: %s: %s (%v)", res.Outcome, res.Message, err)
	}
	plan := strings.Join(res.Plan, "\n")
	if !strings.Contains(plan, "in "+s.cwd+" (its session's cwd)") || !strings.Contains(plan, claudecode.ResumeDir(s.store, s.id)) {
		t.Errorf("plan does not say where it runs and where its state goes:\n%s", plan)
	}
	if _, err := os.Stat(claudecode.ResumeDir(s.store, s.id)); !os.IsNotExist(err) {
		t.Errorf("a dry run made the resume dir (%v)", err)
	}
}

// SPEC §5.5, §6 Answer: a Claude Code session waiting for input, and a
// teammate waiting for its plan's approval, are refused with why: Claude
// Code takes the answer in its own terminal or its lead's session, and
// its inbox is never written.
func TestClaudeAnswerIsRefusedNamingWhy(t *testing.T) {
	store := t.TempDir()
	inbox := filepath.Join(store, "teams", "t", "config.json")
	cases := []struct {
		name string
		n    *model.Node
		want string
	}{
		{"a waiting session", &model.Node{ID: "s1", Source: "claude",
			Blocked: &model.Blocked{Path: filepath.Join(store, "sessions", "1.json"), Question: "permission to run Bash", Kind: "claude-code"}},
			"in the terminal that runs it"},
		{"a plan approval", &model.Node{ID: "s1/worker", Source: "claude",
			Blocked: &model.Blocked{Path: inbox, Question: "plan approval: req-1", Kind: "claude-code plan"}},
			"team's lead"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := treeSum(t, store)
			_, err := Answer(c.n, "yes", time.Now())
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "never written") {
				t.Fatalf("answer: %v, want refused naming %q", err, c.want)
			}
			if after := treeSum(t, store); after != before {
				t.Errorf("the store was written:\n%s", after)
			}
			if why := AnswerRefusal(c.n); why != err.Error() {
				t.Errorf("AnswerRefusal %q, want what Answer refused with", why)
			}
		})
	}
}

// SPEC §5.5: {session_id} of a node whose source names no session (a
// native node, here) refuses the action: the command would start a new
// session, not resume this one.
func TestSessionIDPlaceholderRefusesANodeWithoutOne(t *testing.T) {
	root := t.TempDir()
	deadNode(t, root, "EXECUTE")
	out := filepath.Join(t.TempDir(), "argv")
	e := testEngine(root, model.Thresholds{}, Config{Resume: CommandConfig{Argv: helperArgv("argv", out, "--resume", "{session_id}")}})
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: "s"})
	if err != nil || !res.Refused || !strings.Contains(res.Message, "no session id") {
		t.Fatalf("resume: %s: %s (%v), want refused: no session id", res.Outcome, res.Message, err)
	}
	if len(dispatches(t, out)) != 0 {
		t.Error("the command ran")
	}
}

// SPEC §5.2: a session resumed once has two files in sessions/: the one
// its killed process left, whose pid another process now holds (dead, not
// finished), and its new process's, running. Resuming the old is refused:
// the session would run twice.
func TestClaudeSessionResumedOnceIsNotResumedAgain(t *testing.T) {
	reuser := startHelper(t, "sleep") // holds the old file's pid, created long after it
	s := writeClaudeSession(t, reuser.Process.Pid, time.Now().Add(-2*time.Hour), "idle")
	resumed := startHelper(t, "sleep")
	started := time.Unix(0, int64(testproc.Started(t, resumed.Process.Pid)*1e9))
	ms := float64(started.UnixMilli())
	writeJSON(t, filepath.Join(s.store, "sessions", itoa(resumed.Process.Pid)+".json"), map[string]any{
		"pid": resumed.Process.Pid, "sessionId": s.id, "cwd": s.cwd, "startedAt": ms, "kind": "interactive",
		"status": "busy", "updatedAt": ms, "statusUpdatedAt": ms,
	})
	out := filepath.Join(t.TempDir(), "argv")
	e := claudeEngine(s.store, Config{Resume: CommandConfig{Argv: helperArgv("cwd", out, "{session_id}")}})
	res, err := e.Run(context.Background(), Request{Action: model.ActionResume, Node: s.file})
	if err != nil || !res.Refused || !strings.Contains(res.Message, "already resumed") {
		t.Fatalf("resume of the file left behind: %s: %s (%v), want refused: already resumed", res.Outcome, res.Message, err)
	}
	if len(dispatches(t, out)) != 0 {
		t.Error("the command ran")
	}
}

// The kind actions names Claude Code by is its source's.
func TestClaudeKindIsTheSources(t *testing.T) {
	if sources.ClaudeCode != claudecode.Kind {
		t.Fatalf("actions names Claude Code %q, its source %q", sources.ClaudeCode, claudecode.Kind)
	}
}
