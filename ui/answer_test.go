package ui

import (
	"context"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// fakeAnswers records what the dashboard asks to write.
type fakeAnswers struct {
	mu   sync.Mutex
	sent map[string]string
}

func (f *fakeAnswers) write(_ context.Context, n *model.Node, text string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sent == nil {
		f.sent = map[string]string{}
	}
	f.sent[n.ID] = text
	return n.InfraDir + "/answer.md", nil
}

// SPEC §6 Answer: with no $EDITOR, `a` opens an editor in the dashboard
// that quotes the question; ctrl+s sends the answer through the engine
// (written where the node's system reads it, journaled), and the details
// then say it was answered and waits for the agent.
func TestAnswerIsWrittenHereAndLeavesATrace(t *testing.T) {
	const review = "20261122-090000/review/20261122-090120"
	answers := &fakeAnswers{}
	m := newTestModel(t, 120, 40, Options{Initial: demoSnapshot(), Answer: answers.write})
	m.moveTo(m.rowIndex(review))
	run(m, press(m, "a"))
	frame := stripped(m)
	if !strings.Contains(frame, "> Ship the parser?") || !strings.Contains(frame, "ctrl+s send") {
		t.Fatalf("the editor here does not quote the question:\n%s", frame)
	}
	m.Update(tea.PasteMsg{Content: "yes, ship it"})
	run(m, press(m, "ctrl+s"))
	if got := answers.sent[review]; got != "yes, ship it" {
		t.Fatalf("sent %q, want the text typed", got)
	}
	press(m, "enter")
	details := strings.Join(m.detailLines(m.selectedNode()), "\n")
	if !strings.Contains(details, "answered      at 12:00:00, waiting for the agent") {
		t.Errorf("the details do not say the answer waits for the agent:\n%s", details)
	}
	t.Run("an empty answer sends nothing", func(t *testing.T) {
		answers := &fakeAnswers{}
		m := newTestModel(t, 120, 40, Options{Initial: demoSnapshot(), Answer: answers.write})
		m.moveTo(m.rowIndex(review))
		run(m, press(m, "a"))
		run(m, press(m, "ctrl+s"))
		if len(answers.sent) != 0 || !strings.Contains(statusLine(m), "empty") {
			t.Errorf("sent %v, status %q", answers.sent, statusLine(m))
		}
	})
}

// With $EDITOR, the draft it opens quotes the question in comment lines
// (as git commit does), which the answer leaves out.
func TestAnswerDraftQuotesTheQuestion(t *testing.T) {
	n := &model.Node{ID: "s/review", Blocked: &model.Blocked{Question: "Ship it?\nOr wait for CI?"}}
	draft := answerDraft(n)
	if !strings.HasPrefix(draft, "\n") || !strings.Contains(draft, "# > Ship it?\n# > Or wait for CI?\n") {
		t.Errorf("draft %q does not leave room on top and quote the question", draft)
	}
	if got := answerFromDraft("ship it\n\nafter CI\n" + draft); got != "ship it\n\nafter CI" {
		t.Errorf("answer %q, want the lines written above the comments", got)
	}
	if got := answerFromDraft(draft); got != "" {
		t.Errorf("an untouched draft answers %q, want nothing", got)
	}
}

// SPEC §6 Answer: a node whose system offers dispatchtop no channel is
// refused with the engine's own words, which say where its system takes
// the answer (a Claude Code session in its own terminal), not a generic
// "cannot write".
func TestAnswerRefusalSaysWhereItsSystemTakesIt(t *testing.T) {
	const review = "20261122-090000/review/20261122-090120"
	snap := demoSnapshot()
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			if n.ID == review {
				n.Source = "claude"
				n.InfraDir = ""
			}
		})
	}
	m := newTestModel(t, 160, 40, Options{Initial: snap, Answer: (&fakeAnswers{}).write})
	m.moveTo(m.rowIndex(review))
	run(m, press(m, "a"))
	if got := statusLine(m); !strings.Contains(got, "in the terminal that runs it") {
		t.Errorf("status %q does not say where Claude Code takes the answer", got)
	}
}
