package ui

// `a`: the answer to a blocked node, written in $EDITOR on a draft that
// quotes the question (as `git commit` does), or in an editor here when
// there is no $EDITOR; then written where the node's system reads it and
// journaled, through Options.Answer, in a command.

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/actions"
	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// AnswerWriter writes an operator's answer to blocked node n where its
// system reads it, and journals it; it returns the path written, or why
// not. It does IO: the ui calls it from a command.
type AnswerWriter func(ctx context.Context, n *model.Node, text string) (string, error)

// answerBox is the editor here: the node it answers, its question, and
// the text being written.
type answerBox struct {
	id, question string
	ta           textarea.Model
}

// answerDraftMsg: the draft for $EDITOR is written (or could not be).
type answerDraftMsg struct {
	id, path string
	err      error
}

// answerEditedMsg: $EDITOR closed on the draft.
type answerEditedMsg struct {
	id, path string
	err      error
}

// answeredMsg is an answer written and journaled, or why not.
type answeredMsg struct {
	id, path string
	at       time.Time
	err      error
}

// draftComment starts the lines of a draft that are not the answer.
const draftComment = "#"

// answerDraft is the draft $EDITOR opens: room for the answer at the top,
// then the question quoted in comment lines that are left out.
func answerDraft(n *model.Node) string {
	var b strings.Builder
	b.WriteString("\n\n")
	b.WriteString(draftComment + " Write the answer to " + termtext.Line(n.ID) + " above. Lines starting with '#' are left out;\n")
	b.WriteString(draftComment + " an empty answer sends nothing. The question:\n")
	b.WriteString(draftComment + "\n")
	for _, l := range strings.Split(strings.TrimRight(n.Blocked.Question, "\n"), "\n") {
		b.WriteString(draftComment + " > " + termtext.Line(strings.TrimRight(l, "\r")) + "\n")
	}
	return b.String()
}

// answerFromDraft is the answer a draft holds: its lines but the comments,
// trimmed.
func answerFromDraft(draft string) string {
	var keep []string
	for _, l := range strings.Split(draft, "\n") {
		if !strings.HasPrefix(l, draftComment) {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// answer is `a`: the node's answer in $EDITOR (Options.Editor) or here,
// or the status line says why there is none to write.
func (m *Model) answer() tea.Cmd {
	n := m.selectedNode()
	if n == nil {
		return nil
	}
	if n.Blocked == nil {
		m.setStatus(n.ID+" is not waiting for an answer", true)
		return nil
	}
	path := answerPath(n)
	switch {
	case path == "":
		m.setStatus(actions.AnswerRefusal(n), true)
		return nil
	case m.opts.Answer == nil:
		m.setStatus("answer "+n.ID+": this view writes no answers (answer on the host)", true)
		return nil
	}
	if m.opts.Editor != "" {
		node, draft := n, answerDraft(n)
		return func() tea.Msg {
			f, err := os.CreateTemp("", "dispatchtop-answer-*.md")
			if err != nil {
				return answerDraftMsg{id: node.ID, err: err}
			}
			_, err = f.WriteString(draft)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return answerDraftMsg{id: node.ID, path: f.Name(), err: err}
		}
	}
	ta := textarea.New()
	ta.Placeholder = "the answer"
	ta.ShowLineNumbers = false
	box := &answerBox{id: n.ID, question: n.Blocked.Question, ta: ta}
	m.answerBox = box
	m.setStatus("answering "+n.ID+": ctrl+s sends, esc cancels", false)
	return box.ta.Focus()
}

// answerDrafted runs $EDITOR on the draft.
func (m *Model) answerDrafted(msg answerDraftMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("answer "+msg.id+": the draft: "+msg.err.Error(), true)
		return nil
	}
	argv := commandArgv(m.opts.Editor, "vi", msg.path)
	c := exec.Command(argv[0], argv[1:]...)
	m.setStatus("answering "+msg.id+" in "+argv[0], false)
	id, path := msg.id, msg.path
	return tea.ExecProcess(c, func(err error) tea.Msg { return answerEditedMsg{id: id, path: path, err: err} })
}

// answerEdited sends what the draft holds once $EDITOR closed.
func (m *Model) answerEdited(msg answerEditedMsg) tea.Cmd {
	path := msg.path
	if msg.err != nil {
		m.setStatus("answer "+msg.id+": the editor: "+msg.err.Error(), true)
		return func() tea.Msg { os.Remove(path); return nil }
	}
	n := m.snap.Node(msg.id)
	write, ctx, now := m.opts.Answer, m.ctx, m.opts.Now
	return func() tea.Msg {
		b, err := os.ReadFile(path)
		os.Remove(path)
		if err != nil {
			return answeredMsg{id: msg.id, err: err}
		}
		return sendAnswer(ctx, write, n, msg.id, answerFromDraft(string(b)), now)
	}
}

// sendAnswer writes text through write, in a command.
func sendAnswer(ctx context.Context, write AnswerWriter, n *model.Node, id, text string, now func() time.Time) answeredMsg {
	if n == nil {
		return answeredMsg{id: id, err: errGone}
	}
	if strings.TrimSpace(text) == "" {
		return answeredMsg{id: id, err: errEmptyAnswer}
	}
	path, err := write(ctx, n, text)
	return answeredMsg{id: id, path: path, at: now(), err: err}
}

type answerError string

func (e answerError) Error() string { return string(e) }

const (
	errEmptyAnswer = answerError("the answer is empty: nothing sent")
	errGone        = answerError("the node is gone")
)

// answerKey edits the answer here: ctrl+s sends it, esc cancels.
func (m *Model) answerKey(msg tea.Msg) tea.Cmd {
	box := m.answerBox
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			m.answerBox = nil
			m.setStatus("answer "+box.id+": cancelled, nothing sent", false)
			return nil
		case "ctrl+s":
			m.answerBox = nil
			text, n := box.ta.Value(), m.snap.Node(box.id)
			write, ctx, now, id := m.opts.Answer, m.ctx, m.opts.Now, box.id
			m.setStatus("answer "+id+": sending…", false)
			return func() tea.Msg { return sendAnswer(ctx, write, n, id, text, now) }
		}
	}
	var cmd tea.Cmd
	box.ta, cmd = box.ta.Update(msg)
	return cmd
}

// answered notes an answer sent (the details say it waits for the agent)
// or says why it was not.
func (m *Model) answered(msg answeredMsg) tea.Cmd {
	e := event{time: m.opts.Now(), id: msg.id}
	if msg.err != nil {
		e.text, e.reason, e.bad = "answer: not sent", msg.err.Error(), true
		m.addEvent(e)
		m.setStatus("answer "+msg.id+": "+msg.err.Error(), true)
		return nil
	}
	if m.answeredAt == nil {
		m.answeredAt = map[string]time.Time{}
	}
	m.answeredAt[msg.id] = msg.at
	e.text, e.reason = "answer: sent", msg.path
	m.addEvent(e)
	m.setStatus("answered "+msg.id+" in "+m.shortMessage(msg.path)+"; waiting for the agent", false)
	if n := m.selectedNode(); n != nil && n.ID == msg.id && m.mode == modeDetail {
		return m.loadJournal(n)
	}
	return nil
}

// layoutAnswer sizes the editor here to the screen.
func (m *Model) layoutAnswer(w, h int) {
	box := m.answerBox
	box.ta.SetWidth(max(10, min(w-6, 96)))
	box.ta.SetHeight(max(2, min(8, h-8-len(m.answerQuestion(w)))))
}

// answerQuestion is the question as the editor here quotes it.
func (m *Model) answerQuestion(w int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(m.answerBox.question, "\n"), "\n") {
		for _, wl := range wrapIndent("> "+termtext.Line(strings.TrimRight(l, "\r")), max(10, min(w-6, 96)), 2) {
			out = append(out, wl)
		}
	}
	return out
}

// renderAnswer draws the editor here: the question quoted, the text, the keys.
func (m *Model) renderAnswer(w, h int) []string {
	box := m.answerBox
	st := m.styles
	inner := max(10, min(w-6, 96))
	lines := []string{st.DialogTitle.Render(fit("Answer "+termtext.Line(box.id), inner))}
	q := m.answerQuestion(w)
	if room := h - 6 - box.ta.Height(); len(q) > room {
		q = append(q[:max(0, room-1)], "> …")
	}
	for _, l := range q {
		lines = append(lines, st.Muted.Render(fit(l, inner)))
	}
	lines = append(lines, fit("", inner))
	lines = append(lines, strings.Split(box.ta.View(), "\n")...)
	lines = append(lines, st.Muted.Render(fit("ctrl+s send · esc cancel", inner)))
	frame := st.Dialog.Border(dialogBorder).BorderForeground(st.Title.GetForeground()).Padding(0, 1)
	return strings.Split(frame.Render(strings.Join(lines, "\n")), "\n")
}
