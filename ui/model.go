package ui

// The top-level model: its state, New, and Update's dispatch of each
// message to the file that handles it; View draws what layout left.

import (
	"context"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/themes"
)

// mode is what the body of the screen shows.
type mode int

const (
	modeTree mode = iota
	modeDetail
	modeHelp
)

// focus is the pane the movement keys act on while the tree is shown.
type focus int

const (
	focusTree focus = iota
	focusEvents
)

// Layout: three header lines and a column head above the body, a status
// line and the short help below it.
const (
	headerLines = 5 // the usual height; layout measures the real one
	footerLines = 2
	// statusFade is how long a message stays on the status line before the
	// selected node's reason shows again (the event pane keeps outcomes).
	statusFade = 5 * time.Second
	wheelStep  = 3
	// maxSeenProblems bounds the memory of problems already shown.
	maxSeenProblems = 10000
)

// Messages of the program (unexported: only the ui sends them).
type (
	updateMsg struct {
		update model.Update
	}
	feedClosedMsg struct{}
	tickMsg       time.Time
	dryRunMsg     struct {
		req    ActionRequest
		result ActionResult
		err    error
	}
	// actionDoneMsg holds the outcome of each target a dialog ran.
	actionDoneMsg struct {
		outcomes []outcome
	}
	journalMsg struct {
		id    string
		lines []string
		err   error
	}
)

// outcome is what the engine did with one request.
type outcome struct {
	req    ActionRequest
	result ActionResult
	err    error
}

// event is one line of the event pane: a transition or an action's outcome.
type event struct {
	time   time.Time
	id     string
	text   string // "running → dead" or "kill: refused"
	reason string
	bad    bool // a refusal or error
}

// Model is the top-level Bubble Tea model of the live view.
type Model struct {
	opts   Options
	ctx    context.Context
	now    time.Time
	snap   *model.Snapshot
	keys   keyMap
	help   help.Model
	themes themes.Set
	theme  int
	styles Styles

	width, height int

	// The tree as shown: its columns (columns.go), its rows.
	table     []column
	rows      []row
	index     map[string]int // node id -> row, built on demand (rowOf)
	flat      flatCache      // what rows were laid out from (reflowUpdate)
	collapsed map[string]bool
	cursor    int
	offset    int
	selected  string // the selected node's id: the cursor follows it across updates

	textFilter string       // the `/` prompt's text
	query      query        // textFilter parsed
	prompt     filterPrompt // the `/` prompt: open or not, its input, its history
	state      stateFilter

	mode     mode
	detailVP viewport.Model // the detail pane's scroll
	// detailFollow keeps the detail pane at its end as it grows: set by
	// scrolling to the end, cleared by scrolling back.
	detailFollow bool
	journal      map[string]journalMsg
	output       map[string]outputMsg // output tails read, by node id
	files        filesMsg             // the selected node's files read for the details

	eventsOpen bool
	focus      focus
	events     []event // newest last, at most maxEvents
	eventSeq   int     // counts events added: the pane rebuilds when it moves
	eventScope string  // `E`: only this node's subtree, or "" for all
	eventsVP   viewport.Model

	seenProblems map[model.Problem]bool

	paused    bool
	ticking   bool          // a tick is on its way (armTick)
	pending   *model.Update // the updates held back while paused, merged
	following string        // the followed node's id, or ""

	dialog *dialog
	// awaiting follows each resumed node until its agent runs.
	awaiting map[string]resumeWatch
	status   string
	bad      bool // the status is a refusal or an error
	// statusSet is when the status message was set (it fades, statusFade).
	statusSet time.Time

	feed   <-chan model.Update
	closed bool

	// frame is what the renderer keeps between frames (render_cache.go).
	frame frameCache
	// answerBox is the editor of an answer here, while it is open.
	answerBox *answerBox
	// answeredAt is when each node's answer was sent, this run.
	answeredAt map[string]time.Time
	// profile is the terminal's colour profile, as the program said.
	profile colorprofile.Profile
	// helpTop is the first line of the `?` screen shown (it scrolls).
	helpTop int
	sum     model.Summary // counts of snap, computed once per snapshot
	// tallies are sum's counts per session, recounted only where renewed;
	// fleetSessions, the array the next summary of a fleet's sessions is
	// gathered in.
	tallies       tallyCache
	fleetSessions []*model.Node
	// hosts of a fleet view, and their top-level ids; empty otherwise.
	hosts  []model.Host
	hostOf map[string]int
	// sort orders siblings (`s` cycles); marked holds the ids `v` marked,
	// the targets of the next action.
	sort   sortOrder
	marked map[string]bool
}

// New builds the model from opts.
func New(opts Options) *Model {
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Tick == 0 {
		opts.Tick = time.Second
	}
	initial := opts.Initial
	// The model keeps opts: the first snapshot must not stay reachable
	// through it once a newer one is shown (SPEC §8 memory: at 10,000 nodes
	// a forest is some 10 MB).
	opts.Initial = nil
	set := opts.Themes
	if len(set.Themes) == 0 {
		set = themes.Set{Themes: themes.Builtins()}
	}
	m := &Model{
		opts:      opts,
		ctx:       opts.Context,
		now:       opts.Now(),
		snap:      initial,
		keys:      newKeyMap(opts.Readonly),
		help:      help.New(),
		themes:    set,
		theme:     set.Start,
		table:     treeColumns,
		collapsed: map[string]bool{},
		marked:    map[string]bool{},
		journal:   map[string]journalMsg{},
		output:    map[string]outputMsg{},
		width:     80,
		height:    24,
		frame:     frameCache{dirty: true, headerH: headerLines},
		detailVP:  newPane(),
		eventsVP:  newPane(),

		prompt: newFilterPrompt(),
	}
	m.setHosts(opts.Hosts)
	if m.snap != nil {
		m.sum = m.summarize()
		m.noteProblems()
	}
	if opts.Feed != nil {
		m.feed = opts.Feed.Updates()
	}
	m.applyTheme()
	m.reflow()
	m.layout()
	return m
}

// Init starts the feed and the clock.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.feed != nil {
		cmds = append(cmds, waitFeed(m.feed))
	}
	cmds = append(cmds, m.armTick())
	return tea.Batch(cmds...)
}

// Update handles one message, then lays out the screen it changed (layout),
// so that View only draws. Nothing here does IO: reads and actions run in
// commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.frame.dirty {
		m.layout()
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.ColorProfileMsg:
		if msg.Profile != m.profile {
			m.profile = msg.Profile
			m.applyTheme()
		}
		return nil
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.scrollToCursor()
		m.frame.dirty = true
		return nil
	case tickMsg:
		return m.tick()
	case updateMsg:
		return m.updated(msg.update)
	case feedClosedMsg:
		m.closed = true
		m.frame.dirty = true
		return nil
	case dryRunMsg:
		m.dryRunDone(msg)
		return nil
	case actionDoneMsg:
		m.actionDone(msg)
		// The action wrote a journal line: an open detail pane shows it.
		if n := m.selectedNode(); m.mode == modeDetail && n != nil {
			return m.loadJournal(n)
		}
		return nil
	case journalMsg:
		m.journal[msg.id] = msg
		m.frame.dirty = true
		return nil
	case filesMsg:
		m.files = msg
		m.frame.dirty = true
		return nil
	case outputMsg:
		m.output[msg.id] = msg
		m.frame.dirty = true
		return nil
	case execDoneMsg:
		m.execDone(msg)
		return nil
	case answerDraftMsg:
		m.frame.dirty = true
		return m.answerDrafted(msg)
	case answerEditedMsg:
		m.frame.dirty = true
		return m.answerEdited(msg)
	case answeredMsg:
		m.frame.dirty = true
		return m.answered(msg)
	case tea.KeyPressMsg:
		cmd := m.key(msg)
		m.frame.dirty = true
		return cmd
	case tea.PasteMsg:
		return m.paste(msg)
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
		return nil
	case tea.MouseWheelMsg:
		m.wheel(msg.Mouse())
		return nil
	}
	return nil
}

// tick moves the clock: only ages and the clock move, and View redraws
// those cells where the last frame lets it (render), the whole frame
// elsewhere; a status message fades.
func (m *Model) tick() tea.Cmd {
	m.ticking = false
	if m.paused {
		// A pause freezes the whole frame, ages and the clock too: no
		// tick until the resume starts it again.
		return nil
	}
	m.now = m.opts.Now()
	if m.status != "" && m.now.Sub(m.statusSet) >= statusFade {
		m.status, m.bad = "", false
		m.frame.dirty = true
	}
	if m.frame.ageable {
		m.frame.aged = true
	} else {
		m.frame.dirty = true
	}
	return m.armTick()
}

// updated takes an update of the feed in, or holds it back, merged with
// those before it, while paused; the feed is waited on again.
func (m *Model) updated(u model.Update) tea.Cmd {
	var released tea.Cmd
	switch {
	case !m.paused:
		released = m.apply(u)
	case m.pending != nil:
		merged := m.pending.Merge(u)
		m.pending = &merged
	default:
		m.pending = &u
	}
	var reread tea.Cmd
	if n := m.selectedNode(); n != nil && m.mode == modeDetail && u.Snapshot != nil && !m.paused {
		// The node changed: its output may have grown.
		reread = tea.Batch(m.loadOutput(n), m.loadFiles(n))
	}
	if m.feed == nil || m.closed {
		return tea.Batch(released, reread)
	}
	return tea.Batch(released, reread, waitFeed(m.feed))
}

// paste goes to the answer's editor or the filter prompt, whichever is open.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.answerBox != nil:
		m.frame.dirty = true
		return m.answerKey(msg)
	case m.prompt.typing:
		cmd := m.filterKey(msg)
		m.frame.dirty = true
		return cmd
	}
	return nil
}

// loadJournal reads the node's journal lines in a command.
func (m *Model) loadJournal(n *model.Node) tea.Cmd {
	if m.opts.Journal == nil {
		return nil
	}
	load, ctx, node := m.opts.Journal, m.ctx, n
	return func() tea.Msg {
		lines, err := load(ctx, node)
		return journalMsg{id: node.ID, lines: lines, err: err}
	}
}

// setStatus shows s on the status line, as terminal text whatever it
// quotes, until statusFade has passed or the selection moves.
func (m *Model) setStatus(s string, bad bool) {
	m.status, m.bad, m.statusSet = termtext.Line(s), bad, m.now
	m.frame.dirty = true
}

func (m *Model) applyTheme() {
	th := m.themes.Themes[m.theme]
	if m.profile == colorprofile.ANSI {
		// 16 colours: the theme's own, chosen apart (themes.On16).
		th = themes.On16(th)
	}
	m.styles = NewStyles(th)
	m.frame.reasonWrap, m.frame.reasonWrapOK = wrapOf(m.styles.Text)
	m.frame.rowEpoch++
	m.help.Styles = m.styles.Help
	m.help.ShortSeparator = " · "
	m.frame.dirty = true
}

// View renders the screen as Update laid it out (layout) and changes
// nothing else: the frame is cached and rebuilt only after a change, and
// only the rows on screen are rendered; after a tick, only the cells the
// clock moves (reage), and a frame nothing moved in is handed back as it is.
func (m *Model) View() tea.View {
	switch {
	case m.frame.dirty:
		m.frame.text = m.render()
	case m.frame.aged:
		m.reage()
	}
	m.frame.dirty, m.frame.aged = false, false
	v := tea.NewView(m.frame.text)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "dispatchtop"
	return v
}
