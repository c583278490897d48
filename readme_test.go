package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dispatchtop/dispatchtop/cli"
	"github.com/dispatchtop/dispatchtop/demo"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
	"github.com/dispatchtop/dispatchtop/ui"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's Usage block from dispatchtop --help")

// The README's usage block, between these markers, is dispatchtop --help.
const (
	usageBegin = "<!-- usage: the output of dispatchtop --help -->\n```\n"
	usageEnd   = "```\n<!-- end of usage -->"
)

// The README's Usage section shows what --help says, verbatim: a flag or a
// command changed in one changes the other (go test -run TestReadmeUsage
// -update-readme . rewrites it).
func TestReadmeUsageIsTheHelp(t *testing.T) {
	var help bytes.Buffer
	if code := cli.Execute([]string{"--help"}, strings.NewReader(""), &help, io.Discard); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, usageBegin)
	end := strings.Index(text, usageEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no usage block between %q and %q", usageBegin, usageEnd)
	}
	start += len(usageBegin)
	if *updateReadme {
		text = text[:start] + help.String() + text[end:]
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[start:end]; got != help.String() {
		t.Errorf("the README's usage block is not dispatchtop --help (go test -run TestReadmeUsage -update-readme . rewrites it)\nREADME:\n%s\n--help:\n%s", got, help.String())
	}
}

// The README's screenshot, between these markers, is the ui's golden frame
// of the demo fleet.
const (
	screenshotBegin = "<!-- screenshot: ui/testdata/TestGoldenReadme.golden -->\n```\n"
	screenshotEnd   = "\n```\n<!-- end of screenshot -->"
	screenshotFile  = "ui/testdata/TestGoldenReadme.golden"
)

// The README shows the screen as it is drawn: the golden is the live demo's
// frame (TestReadmeScreenshotIsTheLiveDemo, `make readme-screenshot`), and
// the README's block is the golden (go test -run TestReadmeScreenshot
// -update-readme . rewrites both).
func TestReadmeScreenshotIsTheGolden(t *testing.T) {
	golden, err := os.ReadFile(screenshotFile)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, screenshotBegin)
	end := strings.Index(text, screenshotEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no screenshot between %q and %q", screenshotBegin, screenshotEnd)
	}
	start += len(screenshotBegin)
	if *updateReadme {
		text = text[:start] + string(golden) + text[end:]
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[start:end]; got != string(golden) {
		t.Errorf("the README's screenshot is not %s (go test -run TestReadmeScreenshot -update-readme . rewrites it)\nREADME:\n%s\ngolden:\n%s", screenshotFile, got, golden)
	}
}

// Every document under docs/ (its .md files) is linked from the README, so
// a reader who starts there finds each of them.
func TestReadmeLinksEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v, %d files", err, len(docs))
	}
	for _, d := range docs {
		if link := "](" + filepath.ToSlash(d) + ")"; !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not link %s (no %q)", d, link)
		}
	}
}

// architecture.md's "Where to look" has a row for each area a change
// starts in; --once and its JSON are one.
func TestArchitectureWhereToLookNamesOnce(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, where, ok := strings.Cut(string(doc), "## Where to look")
	if !ok {
		t.Fatal("docs/architecture.md has no Where to look section")
	}
	for _, want := range []string{"`--once`", "`cli/once.go`", "`report/json.go`", "`docs/schema/dispatchtop-v1.json`"} {
		if !strings.Contains(where, want) {
			t.Errorf("Where to look does not name %s", want)
		}
	}
}

// The README's screenshot is drawn from the demo itself, at the README's
// size: the demo's fleet runs (its real processes and bus writers, in a
// temporary dir), the real watcher reads it until it has settled where its
// scenario lays it out, and the real ui draws it, with the nodes of
// readmeFolded folded and the first row selected. Only what differs from one run to the
// next is replaced by placeholders (readmePlaceholders): the fleet's dir,
// the clock, pids, ages, the watch's mode. A scenario changed (a node
// renamed, added, settling otherwise) fails here until `make
// readme-screenshot` draws the README again.
func TestReadmeScreenshotIsTheLiveDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo fleet for some 15 s")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet, err := demo.Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := fleet.Stop(); err != nil {
			t.Error(err)
		}
	}()
	w, err := scanner.NewWatcher(scanner.Options{
		Roots: fleet.Roots(), Thresholds: demo.Thresholds(), Sources: demo.Sources(), Now: time.Now,
		ThresholdsGiven: scanner.GivenThresholds{Beat: true, Stale: true, KillAfter: true, ExitGrace: true},
	}, scanner.WatchOptions{Transitions: ui.EventTransitions()})
	if err != nil {
		t.Fatal(err)
	}
	watchDone := make(chan error, 1)
	go func() { watchDone <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-watchDone; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	}()

	golden, err := os.ReadFile(screenshotFile)
	if err != nil && !*updateReadme {
		t.Fatal(err)
	}
	// The scenario settles 13 s in (the kill candidate, its last event) and
	// stays so until 20 s (deploy starting): polled, with a deadline that a
	// loaded machine does not reach.
	// Once settled, a frame unlike the golden is looked at again for 10 s
	// (past the end of the settled state) before the test gives up.
	deadline := time.Now().Add(60 * time.Second)
	var frame, state string
	began := time.Now()
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		snap := w.Snapshot()
		was := state
		if state = demoSettled(snap); state != "" {
			if state != was {
				t.Logf("%.1fs in: %s", time.Since(began).Seconds(), state)
			}
			continue
		}
		if frame == "" {
			deadline = time.Now().Add(10 * time.Second)
		}
		frame = readmeFrame(t, readmePlaceholders(snap, fleet.Dir()))
		if *updateReadme || frame == string(golden) {
			break
		}
	}
	switch {
	case frame == "":
		t.Fatalf("the demo did not settle within a minute: %s", state)
	case *updateReadme:
		if err := os.WriteFile(screenshotFile, []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
		writeReadmeScreenshot(t, frame)
	case frame != string(golden):
		t.Errorf("the demo draws another screen than %s (make readme-screenshot draws it again)\ndemo:\n%s\ngolden:\n%s", screenshotFile, frame, golden)
	}
}

// demoSettled says why snap is not yet the demo at rest, or "" when it
// is: every node its scenario lays out is there in the state it ends in
// (and no other node), the hung agent is a kill candidate while deploy is
// still starting (13–20 s in), no node is stalled but those the scenario
// hangs (a beat late on a loaded machine is no frame of the demo), the
// Claude Code lead is in its long busy stretch, and no node is quiet past
// stale but a Claude Code teammate, whose sign of life is its start (its
// joinedAt): quiet from its first second on, for good, so its quiet is
// part of the frame. A node quiet between two of its beats (lint beats
// every 2.5 s; any beat is a second old at times) is drawn at a beat by
// readmePlaceholders: the phase of a beat differs from run to run.
func demoSettled(snap *model.Snapshot) string {
	if snap == nil {
		return "no snapshot"
	}
	var why []string
	layout, th := demo.Layout(), demo.Thresholds()
	seen := map[string]bool{}
	kill, starting, quiet, late := 0, 0, []string{}, []string{}
	for _, n := range snap.Nodes() {
		l, ok := layoutNode(layout, n.ID)
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("%s is no node of demo.Layout", n.ID))
		case n.State != l.State:
			why = append(why, fmt.Sprintf("%s is %s (demo.Layout: %s)", n.ID, n.State, l.State))
		}
		seen[l.ID] = ok
		if n.HasFlag(model.FlagKillCandidate) {
			kill++
		}
		if n.HasFlag(model.FlagStarting) {
			starting++
		}
		if n.HasFlag(model.FlagStalled) && !n.HasFlag(model.FlagKillCandidate) && !n.HasFlag(model.FlagBlocked) {
			late = append(late, n.ID)
		}
		if n.HasFlag(model.FlagQuiet) && n.Traits.SignOfLife != model.SignStart && snap.GeneratedAt.Sub(n.BeatMtime) > th.Stale {
			quiet = append(quiet, n.ID)
		}
		if l.Source == string(claudecode.Kind) && l.Role == "interactive" && l.State == model.StateRunning {
			if status := sourceField(n, "status"); status != "busy" {
				why = append(why, fmt.Sprintf("the Claude Code lead %s is %q, not busy", n.ID, status))
			}
		}
	}
	for _, l := range layout {
		if !seen[l.ID] {
			why = append(why, fmt.Sprintf("demo.Layout's %s is not there", l.ID))
		}
	}
	if kill == 0 {
		why = append(why, "no kill candidate")
	}
	if starting == 0 {
		why = append(why, "no node starting")
	}
	if len(late) > 0 {
		why = append(why, fmt.Sprintf("stalled, though the scenario hangs it not: %s", strings.Join(late, ", ")))
	}
	if len(quiet) > 0 {
		why = append(why, fmt.Sprintf("quiet past stale: %s", strings.Join(quiet, ", ")))
	}
	return strings.Join(why, "; ")
}

// layoutNode is the node of layout the snapshot's id names: a root's nodes
// are named from the root's own name (`jobs/…`), the layout's from the
// fleet's dir (`.teaparty/jobs/…`).
func layoutNode(layout []demo.Node, id string) (demo.Node, bool) {
	for _, l := range layout {
		if l.ID == id || strings.HasSuffix(l.ID, "/"+id) {
			return l, true
		}
	}
	return demo.Node{}, false
}

// sourceField is the value of n's source field name ("" none).
func sourceField(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// readmeFolded are the nodes the README's frame folds (each by the end of
// its id), so that 100×28 shows every node that needs a look, the Claude
// Code session's team open: the crashed session (its BELOW says what is
// under it), the coding sub-lead's healthy worker, and the two jobs whose
// rows below are as their BELOW says. The last row, job-103 folded, is
// one below the frame.
var readmeFolded = []string{
	"/coding/20261122-090105",
	"/20261122-091500",
	"/job-101--refactor-parser",
	"/job-103--upgrade-deps",
}

// readmeFrame is the dashboard of snap at the README's size (100×28), the
// nodes of readmeFolded folded, the first row selected, its colours
// stripped.
func readmeFrame(t *testing.T, snap *model.Snapshot) string {
	t.Helper()
	clock := snap.GeneratedAt
	m := ui.New(ui.Options{Initial: snap, Now: func() time.Time { return clock }, Tick: -1})
	frame := func() []string { return strings.Split(ansi.Strip(m.View().Content), "\n") }
	press := func(code rune, text string) { m.Update(tea.KeyPressMsg{Code: code, Text: text}) }
	// Down to each node, whose id closes the status line once selected:
	// on a screen wide enough for the id after its reason.
	m.Update(tea.WindowSizeMsg{Width: 400, Height: 28})
	for _, id := range readmeFolded {
		press('g', "g")
		found := false
		for range snap.NodeCount() {
			if lines := frame(); strings.HasSuffix(strings.TrimRight(lines[len(lines)-2], " "), id) {
				found = true
				break
			}
			press('j', "j")
		}
		if !found {
			t.Fatalf("no row of the demo is %s, to fold", id)
		}
		press(tea.KeySpace, " ")
	}
	press('g', "g")
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 28})
	return strings.Join(frame(), "\n")
}

// readmePlaceholders is a copy of snap with what differs from run to run
// replaced: the fleet's dir by /tmp/dispatchtop-demo; the clock by 12:00:00;
// each pid, in the tree's order, by 4101, 4102, …; each age (the BEAT cell,
// the moving age of a reason) by one its flags agree with: 0s running, 5s
// stalled (stale 4 s + 1), 11s kill candidate (kill-after 10 s + 1), 5s
// quiet for good (a Claude Code teammate; atABeat draws a node quiet
// between its beats at a beat), 10s
// for an agent that is gone or done; a time of day a reason quotes (when a
// lead died) by 11:59:50; the watch's mode by fsnotify (a host out of
// inotify watches polls).
func readmePlaceholders(snap *model.Snapshot, dir string) *model.Snapshot {
	const shownDir = "/tmp/dispatchtop-demo"
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.Local)
	th := demo.Thresholds()
	out := &model.Snapshot{GeneratedAt: clock, RootSources: snap.RootSources, Thresholds: snap.Thresholds,
		Problems: snap.Problems, Watch: model.WatchInfo{Mode: "fsnotify"}, ByID: map[string]*model.Node{}}
	for _, r := range snap.Roots {
		out.Roots = append(out.Roots, strings.Replace(r, dir, shownDir, 1))
	}
	pids := map[int]int{}
	var copyNode func(n, parent *model.Node) *model.Node
	copyNode = func(n, parent *model.Node) *model.Node {
		c := *n
		c.Parent, c.Children = parent, nil
		if n.Heartbeat != nil {
			hb := *n.Heartbeat
			c.Heartbeat = &hb
		}
		if n.Rare != nil {
			rare := *n.Rare
			c.Rare = &rare
		}
		for _, p := range []*int{heartbeatPID(&c), legacyPID(&c)} {
			if p != nil && *p != 0 {
				if _, ok := pids[*p]; !ok {
					pids[*p] = 4101 + len(pids)
				}
				*p = pids[*p]
			}
		}
		out.ByID[c.ID] = &c
		for _, k := range n.Children {
			c.Children = append(c.Children, copyNode(k, &c))
		}
		return &c
	}
	for _, s := range snap.Sessions {
		out.Sessions = append(out.Sessions, copyNode(s, nil))
	}
	// The pids the reasons quote are renamed as the nodes' are (whole
	// numbers only: an id's digits are not a pid), the dir as the roots.
	since := clock.Add(-th.KillAfter).Format("15:04:05")
	rename := func(s string) string {
		s = strings.ReplaceAll(s, dir, shownDir)
		s = clockTime.ReplaceAllString(s, since)
		return number.ReplaceAllStringFunc(s, func(d string) string {
			if p, err := strconv.Atoi(d); err == nil && pids[p] != 0 {
				return strconv.Itoa(pids[p])
			}
			return d
		})
	}
	for _, n := range out.ByID {
		atABeat(n)
		age := th.KillAfter
		switch {
		case n.HasFlag(model.FlagKillCandidate):
			age = th.KillAfter + time.Second
		case n.HasFlag(model.FlagStalled):
			age = th.Stale + time.Second
		case n.HasFlag(model.FlagQuiet):
			// Quiet for good (atABeat leaves no other): past stale, its
			// age says nothing (a Claude Code teammate, its sign of life
			// its start).
			age = th.Stale + time.Second
		case n.State == model.StateRunning:
			age = 0
		}
		if !n.BeatMtime.IsZero() {
			n.BeatMtime = clock.Add(-age)
		}
		a := n.ReasonAge
		if a.Len <= 0 || a.Since.IsZero() {
			n.Reason = rename(n.Reason)
			continue
		}
		before := rename(n.Reason[:a.At])
		n.Reason = before + n.Reason[a.At:a.At+a.Len] + rename(n.Reason[a.At+a.Len:])
		n.ReasonAge.At, n.ReasonAge.Since = int32(len(before)), model.InstantOf(clock.Add(-age))
	}
	return out
}

// quietLead is what a reason says of a node quiet between its beats, where
// at a beat it says "; " (liveness: "beating, quiet: last beat 1s ago",
// "beating; last beat 0s ago").
const quietLead = ", quiet: "

// atABeat draws n at a beat when it is quiet between two of its beats (its
// sign of life one that moves, not its start): not quiet, its reason as a
// fresh beat's. Which of the two a node is at the frame's instant is the
// phase of its beat, which differs from run to run.
func atABeat(n *model.Node) {
	if !n.HasFlag(model.FlagQuiet) || n.Traits.SignOfLife == model.SignStart {
		return
	}
	i := strings.Index(n.Reason, quietLead)
	if i < 0 || (n.ReasonAge.Len > 0 && int(n.ReasonAge.At) < i) {
		return
	}
	n.Flags = slices.DeleteFunc(slices.Clone(n.Flags), func(f model.Flag) bool { return f == model.FlagQuiet })
	n.Reason = n.Reason[:i] + "; " + n.Reason[i+len(quietLead):]
	if n.ReasonAge.Len > 0 {
		n.ReasonAge.At -= int32(len(quietLead) - len("; "))
	}
}

// number is a whole number in a text; clockTime a time of day.
var (
	number    = regexp.MustCompile(`\b[0-9]+\b`)
	clockTime = regexp.MustCompile(`\b[0-9]{2}:[0-9]{2}:[0-9]{2}\b`)
)

func heartbeatPID(n *model.Node) *int {
	if n.Heartbeat == nil {
		return nil
	}
	return &n.Heartbeat.PID
}

func legacyPID(n *model.Node) *int {
	if n.Rare == nil {
		return nil
	}
	return &n.Rare.LegacyPID
}

// writeReadmeScreenshot puts frame in the README's screenshot block.
func writeReadmeScreenshot(t *testing.T, frame string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, screenshotBegin)
	end := strings.Index(text, screenshotEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no screenshot between %q and %q", screenshotBegin, screenshotEnd)
	}
	text = text[:start+len(screenshotBegin)] + frame + text[end:]
	if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
