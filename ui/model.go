package ui

import (
	"context"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

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
	wheelStep   = 3
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

	// The tree as shown.
	rows      []row
	index     map[string]int // node id -> row
	collapsed map[string]bool
	cursor    int
	offset    int
	selected  string // the selected node's id: the cursor follows it across updates

	textFilter  string // the `/` prompt's text
	query       query  // textFilter parsed
	typing      bool   // the `/` prompt is open
	filterInput textinput.Model
	// filterHistory is the filters kept with enter in this run, oldest
	// first; historyAt is where up/down stand in it (len: the draft).
	filterHistory []string
	historyAt     int
	historyDraft  string
	state         stateFilter

	mode     mode
	detailVP viewport.Model // the detail pane's scroll
	// detailFollow keeps the detail pane at its end as it grows: set by
	// scrolling to the end, cleared by scrolling back.
	detailFollow bool
	journal      map[string]journalMsg
	output       map[string]outputMsg // output tails read, by node id

	eventsOpen bool
	focus      focus
	events     []event // newest last, at most maxEvents
	eventSeq   int     // counts events added: the pane rebuilds when it moves
	eventScope string  // `E`: only this node's subtree, or "" for all
	eventsVP   viewport.Model
	// eventsBuilt is what the event viewport's lines were built from, and
	// eventsShown how many events they hold.
	eventsBuilt eventsKey
	eventsShown int

	seenProblems map[model.Problem]bool

	paused    bool
	pending   *model.Update // the updates held back while paused, merged
	following string        // the followed node's id, or ""

	dialog *dialog
	// awaiting follows each resumed node until its agent runs.
	awaiting map[string]resumeWatch
	status   string
	bad      bool // the status is a refusal or an error

	feed   <-chan model.Update
	closed bool

	frame   string
	dirty   bool
	header  []string // the header's lines, built by layout
	headerH int      // len(header)
	// detail is the detail pane's lines, wrapped to the width (modeDetail).
	detail []string
	sum    model.Summary // counts of snap, computed once per snapshot
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
	set := opts.Themes
	if len(set.Themes) == 0 {
		set = themes.Set{Themes: themes.Builtins()}
	}
	m := &Model{
		opts:      opts,
		ctx:       opts.Context,
		now:       opts.Now(),
		snap:      opts.Initial,
		keys:      newKeyMap(opts.Readonly),
		help:      help.New(),
		themes:    set,
		theme:     set.Start,
		collapsed: map[string]bool{},
		marked:    map[string]bool{},
		journal:   map[string]journalMsg{},
		output:    map[string]outputMsg{},
		width:     80,
		height:    24,
		dirty:     true,
		headerH:   headerLines,
		detailVP:  newPane(),
		eventsVP:  newPane(),

		filterInput: newFilterInput(),
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
	if m.opts.Tick > 0 {
		cmds = append(cmds, tick(m.opts.Tick))
	}
	return tea.Batch(cmds...)
}

// waitFeed blocks on the feed in a command and coalesces a burst: whatever
// is already queued behind the first update joins it, so a thousand
// heartbeat touches make one redraw.
func waitFeed(ch <-chan model.Update) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-ch
		if !ok {
			return feedClosedMsg{}
		}
		for {
			select {
			case next, ok := <-ch:
				if !ok {
					return updateMsg{update: u}
				}
				u = u.Merge(next)
			default:
				return updateMsg{update: u}
			}
		}
	}
}

func tick(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles one message, then lays out the screen it changed (layout),
// so that View only draws. Nothing here does IO: reads and actions run in
// commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.dirty {
		m.layout()
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.scrollToCursor()
		m.dirty = true
		return nil
	case tickMsg:
		if !m.paused {
			// A pause freezes the whole frame: ages and the clock too.
			m.now = m.opts.Now()
			m.dirty = true
		}
		return tick(m.opts.Tick)
	case updateMsg:
		if m.paused {
			if m.pending != nil {
				merged := m.pending.Merge(msg.update)
				m.pending = &merged
			} else {
				u := msg.update
				m.pending = &u
			}
		} else {
			m.apply(msg.update)
		}
		var reread tea.Cmd
		if n := m.selectedNode(); n != nil && m.mode == modeDetail && msg.update.Snapshot != nil && !m.paused {
			// The node changed: its output may have grown.
			reread = m.loadOutput(n)
		}
		if m.feed == nil || m.closed {
			return reread
		}
		return tea.Batch(reread, waitFeed(m.feed))
	case feedClosedMsg:
		m.closed = true
		m.dirty = true
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
		m.dirty = true
		return nil
	case outputMsg:
		m.output[msg.id] = msg
		m.dirty = true
		return nil
	case execDoneMsg:
		m.execDone(msg)
		return nil
	case tea.KeyPressMsg:
		cmd := m.key(msg)
		m.dirty = true
		return cmd
	case tea.PasteMsg:
		if m.typing {
			cmd := m.filterKey(msg)
			m.dirty = true
			return cmd
		}
		return nil
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
		return nil
	case tea.MouseWheelMsg:
		m.wheel(msg.Mouse())
		return nil
	}
	return nil
}

// apply takes in a new snapshot: rows are rebuilt, the selection stays on
// the same node id, and transitions go to the event pane.
func (m *Model) apply(u model.Update) {
	// Only the newest maxEvents can stay in the pane: a fleet crossing a
	// threshold together (10,000 nodes going stalled) must not build and
	// shift out thousands of events one by one.
	first := len(u.Transitions)
	for kept := 0; first > 0 && kept < maxEvents; first-- {
		if !quietOnly(u.Transitions[first-1]) {
			kept++
		}
	}
	for _, t := range u.Transitions[first:] {
		if quietOnly(t) {
			continue
		}
		m.addEvent(transitionEvent(t))
	}
	if u.Hosts != nil {
		m.setHosts(u.Hosts)
	}
	if u.Snapshot != nil {
		m.snap = u.Snapshot
		m.sum = m.summarize()
		m.now = m.opts.Now()
		m.noteProblems()
		m.noteAgents()
	}
	// A node marked for a batch that is gone is no target any more.
	for id := range m.marked {
		if m.snap == nil || m.snap.Node(id) == nil {
			delete(m.marked, id)
		}
	}
	m.reflow()
}

// jumpToAction moves to the next (dir 1) or previous (dir -1) node that
// needs action, in the order the tree shows, wrapping around; collapsed
// ancestors of the node it lands on are expanded. The state and text
// filters still apply: what they hide is not jumped to.
func (m *Model) jumpToAction(dir int) {
	if m.snap == nil {
		return
	}
	all := flatten(m.snap.Sessions, flatOptions{query: m.query, state: m.state, sort: m.sort})
	at := -1
	for i, r := range all {
		if r.node.ID == m.selected {
			at = i
			break
		}
	}
	if at < 0 && dir < 0 {
		at = 0
	}
	for step := 1; step <= len(all); step++ {
		i := ((at+dir*step)%len(all) + len(all)) % len(all)
		n := all[i].node
		if !needsAction(n) || !all[i].match {
			continue
		}
		for p := n.Parent; p != nil; p = p.Parent {
			delete(m.collapsed, p.ID)
		}
		m.following = ""
		m.selected = n.ID
		m.reflow()
		m.moveTo(m.index[n.ID])
		return
	}
	m.setStatus("no node needs action", false)
}

// quietOnly is a transition that only sets or clears `quiet`: a beat a
// little late, which flaps with every beat and would drown the event pane.
func quietOnly(t model.Transition) bool {
	if t.From != t.To || t.From == "" {
		return false
	}
	strip := func(fs []model.Flag) []model.Flag {
		out := make([]model.Flag, 0, len(fs))
		for _, f := range fs {
			if f != model.FlagQuiet {
				out = append(out, f)
			}
		}
		return out
	}
	a, b := strip(t.FromFlags), strip(t.ToFlags)
	return slices.Equal(a, b)
}

// noteProblems puts each problem of the scan in the event pane once, so a
// read error that belongs to no row is still seen.
func (m *Model) noteProblems() {
	if m.seenProblems == nil || len(m.seenProblems) > maxSeenProblems {
		m.seenProblems = map[model.Problem]bool{}
	}
	for _, p := range m.snap.Problems {
		if m.seenProblems[p] {
			continue
		}
		m.seenProblems[p] = true
		m.addEvent(event{time: m.snap.GeneratedAt, id: p.Path, text: "problem", reason: p.Error, bad: true})
	}
}

func transitionEvent(t model.Transition) event {
	from, to := describe(t.From, t.FromFlags), describe(t.To, t.ToFlags)
	return event{time: t.Time, id: t.ID, text: from + " → " + to, reason: t.Reason,
		bad: t.To == model.StateDead || t.To == ""}
}

func describe(s model.State, flags []model.Flag) string {
	if s == "" {
		return "(none)"
	}
	parts := []string{string(s)}
	for _, f := range flags {
		parts = append(parts, string(f))
	}
	return strings.Join(parts, " ")
}

func (m *Model) addEvent(e event) {
	m.events = append(m.events, e)
	m.eventSeq++
	if len(m.events) > maxEvents {
		// Keep the newest, shifted in place: the dropped head is overwritten
		// (so it can be collected) and a burst allocates nothing.
		drop := len(m.events) - maxEvents
		copy(m.events, m.events[drop:])
		clear(m.events[maxEvents:])
		m.events = m.events[:maxEvents]
	}
	m.dirty = true
}

// reflow rebuilds the rows and puts the cursor back on the selected node.
func (m *Model) reflow() {
	var sessions []*model.Node
	if m.snap != nil {
		sessions = m.snap.Sessions
	}
	o := flatOptions{collapsed: m.collapsed, query: m.query, state: m.state, sort: m.sort}
	if m.following != "" {
		o.pin = m.snap.Node(m.following)
		if o.pin != nil {
			m.selected = m.following
		}
	}
	m.rows = flatten(sessions, o)
	if m.index == nil {
		m.index = make(map[string]int, len(m.rows))
	} else {
		clear(m.index)
	}
	for i, r := range m.rows {
		m.index[r.node.ID] = i
	}
	if i, ok := m.index[m.selected]; ok {
		m.cursor = i
	} else {
		// The selected node is gone or hidden: stay at the same height.
		m.cursor = min(m.cursor, len(m.rows)-1)
		m.cursor = max(m.cursor, 0)
		m.selected = ""
		if len(m.rows) > 0 {
			m.selected = m.rows[m.cursor].node.ID
		}
	}
	if m.following != "" {
		m.centerCursor()
	} else {
		m.scrollToCursor()
	}
	m.dirty = true
}

// selectedNode is the node under the cursor, or nil.
func (m *Model) selectedNode() *model.Node {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	return m.rows[m.cursor].node
}

func (m *Model) moveTo(i int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = max(0, min(i, len(m.rows)-1))
	m.selected = m.rows[m.cursor].node.ID
	m.scrollToCursor()
	// The operator moved on: the status line shows the selection again (an
	// outcome stays in the event pane).
	m.status, m.bad = "", false
}

// treeHeight is how many tree rows fit on screen.
func (m *Model) treeHeight() int {
	h := m.height - m.headerH - footerLines
	if m.eventsOpen && m.mode == modeTree {
		h -= m.eventPaneHeight()
	}
	return max(h, 1)
}

func (m *Model) eventPaneHeight() int {
	body := m.height - m.headerH - footerLines
	return max(3, body/3)
}

func (m *Model) scrollToCursor() {
	h := m.treeHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, len(m.rows)-h))
}

func (m *Model) centerCursor() {
	h := m.treeHeight()
	m.offset = max(0, min(m.cursor-h/2, len(m.rows)-h))
}

func (m *Model) click(ms tea.Mouse) {
	if ms.Button != tea.MouseLeft || m.dialog != nil || m.mode != modeTree {
		return
	}
	line := ms.Y - m.headerH
	if line < 0 || line >= m.treeHeight() {
		return
	}
	if i := m.offset + line; i < len(m.rows) {
		m.following = ""
		m.moveTo(i)
		m.dirty = true
	}
}

func (m *Model) wheel(ms tea.Mouse) {
	step := 0
	switch ms.Button {
	case tea.MouseWheelUp:
		step = -wheelStep
	case tea.MouseWheelDown:
		step = wheelStep
	default:
		return
	}
	if m.mode == modeDetail {
		m.detailVP, _ = m.detailVP.Update(tea.MouseWheelMsg(ms))
		m.detailFollow = m.detailVP.AtBottom() && ms.Button == tea.MouseWheelDown
		m.dirty = true
		return
	}
	h := m.treeHeight()
	if m.eventsOpen && m.mode == modeTree && ms.Y >= m.headerH+h {
		m.eventsVP, _ = m.eventsVP.Update(tea.MouseWheelMsg(ms))
		m.dirty = true
		return
	}
	m.offset = max(0, min(m.offset+step, len(m.rows)-h))
	// The cursor stays on screen, so a key after scrolling acts on what is seen.
	if m.cursor < m.offset {
		m.moveTo(m.offset)
	} else if m.cursor >= m.offset+h {
		m.moveTo(m.offset + h - 1)
	}
	m.dirty = true
}

// key handles a key press; the dialog and the filter prompt take keys first.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.dialog != nil {
		cmd, pass := m.dialogKey(msg)
		if !pass {
			return cmd
		}
	}
	if m.typing {
		return m.filterKey(msg)
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		if m.mode == modeHelp {
			m.mode = modeTree
		} else {
			m.mode = modeHelp
		}
		return nil
	case key.Matches(msg, k.Back):
		switch {
		case m.mode == modeTree && m.focus == focusEvents:
			m.focus = focusTree
		case m.mode != modeTree:
			m.mode = modeTree
		case m.textFilter != "" || m.state != filterAll:
			m.state = filterAll
			m.setFilter("")
		}
		return nil
	}
	if m.mode == modeHelp {
		return nil
	}
	if m.mode == modeDetail {
		return m.detailKey(msg)
	}
	if m.focus == focusEvents && m.eventsOpen && m.scrollKey(&m.eventsVP, msg) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Up):
		m.following = ""
		m.moveTo(m.cursor - 1)
	case key.Matches(msg, k.Down):
		m.following = ""
		m.moveTo(m.cursor + 1)
	case key.Matches(msg, k.PageUp):
		m.following = ""
		m.moveTo(m.cursor - m.treeHeight())
	case key.Matches(msg, k.PageDown):
		m.following = ""
		m.moveTo(m.cursor + m.treeHeight())
	case key.Matches(msg, k.Top):
		m.following = ""
		m.moveTo(0)
	case key.Matches(msg, k.Bottom):
		m.following = ""
		m.moveTo(len(m.rows) - 1)
	case key.Matches(msg, k.Collapse):
		m.collapse()
	case key.Matches(msg, k.Expand):
		if n := m.selectedNode(); n != nil && m.collapsed[n.ID] {
			delete(m.collapsed, n.ID)
			m.reflow()
		}
	case key.Matches(msg, k.Toggle):
		if n := m.selectedNode(); n != nil && len(n.Children) > 0 {
			if m.collapsed[n.ID] {
				delete(m.collapsed, n.ID)
			} else {
				m.collapsed[n.ID] = true
			}
			m.reflow()
		}
	case key.Matches(msg, k.CollapseAll):
		if m.snap != nil {
			for _, s := range m.snap.Sessions {
				s.Walk(func(n *model.Node) {
					if len(n.Children) > 0 {
						m.collapsed[n.ID] = true
					}
				})
			}
			// The selection moves up to its session, which stays visible.
			if n := m.selectedNode(); n != nil {
				for n.Parent != nil {
					n = n.Parent
				}
				m.selected = n.ID
			}
		}
		m.reflow()
	case key.Matches(msg, k.ExpandAll):
		clear(m.collapsed)
		m.reflow()
	case key.Matches(msg, k.NextAction):
		m.jumpToAction(1)
	case key.Matches(msg, k.PrevAction):
		m.jumpToAction(-1)
	case key.Matches(msg, k.Sort):
		m.sort = (m.sort + 1) % sortCount
		m.reflow()
		m.setStatus("sort: "+m.sort.String(), false)
	case key.Matches(msg, k.Mark):
		if n := m.selectedNode(); n != nil {
			if m.marked[n.ID] {
				delete(m.marked, n.ID)
			} else {
				m.marked[n.ID] = true
			}
			m.following = ""
			m.moveTo(m.cursor + 1)
		}
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.StateFilter):
		m.state = (m.state + 1) % filterCount
		m.reflow()
	case key.Matches(msg, k.Details):
		if n := m.selectedNode(); n != nil {
			m.mode = modeDetail
			m.detailVP.GotoTop()
			m.detailFollow = false
			return tea.Batch(m.loadJournal(n), m.loadOutput(n))
		}
	case key.Matches(msg, k.Events):
		m.eventsKeyPressed()
	case key.Matches(msg, k.EventScope):
		m.eventScopeKeyPressed()
	case key.Matches(msg, k.Copy):
		return m.copyID()
	case key.Matches(msg, k.Output):
		return m.openPager()
	case key.Matches(msg, k.Answer):
		return m.answer()
	case key.Matches(msg, k.Pause):
		m.togglePause()
	case key.Matches(msg, k.Follow):
		if m.following != "" {
			m.following = ""
			m.setStatus("follow off", false)
		} else if n := m.selectedNode(); n != nil {
			m.following = n.ID
			m.setStatus("following "+clean(n.ID), false)
			m.reflow()
		}
	case key.Matches(msg, k.Theme):
		m.theme = (m.theme + 1) % len(m.themes.Themes)
		m.applyTheme()
		m.setStatus("theme "+m.themes.Themes[m.theme].Name, false)
	}
	return m.actionKey(msg)
}

// collapse folds the selected node, or moves to its parent when it is a
// leaf or already folded (as file trees do).
func (m *Model) collapse() {
	n := m.selectedNode()
	if n == nil {
		return
	}
	if len(n.Children) > 0 && !m.collapsed[n.ID] {
		m.collapsed[n.ID] = true
		m.reflow()
		return
	}
	if n.Parent != nil {
		if i, ok := m.index[n.Parent.ID]; ok {
			m.following = ""
			m.moveTo(i)
		}
	}
}

func (m *Model) togglePause() {
	m.paused = !m.paused
	if m.paused {
		m.setStatus("updates paused (p resumes)", false)
		return
	}
	m.setStatus("updates resumed", false)
	m.now = m.opts.Now()
	if m.pending != nil {
		u := *m.pending
		m.pending = nil
		m.apply(u)
	}
}

func (m *Model) detailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Details):
		m.mode = modeTree
	case m.scrollKey(&m.detailVP, msg):
		m.detailFollow = m.detailVP.AtBottom() &&
			(key.Matches(msg, k.Bottom) || key.Matches(msg, k.Down) || key.Matches(msg, k.PageDown))
	case key.Matches(msg, k.Events):
		m.eventsKeyPressed()
		return nil
	case key.Matches(msg, k.Copy):
		return m.copyID()
	case key.Matches(msg, k.Output):
		return m.openPager()
	case key.Matches(msg, k.Answer):
		return m.answer()
	}
	return m.actionKey(msg)
}

// actionKey opens the confirmation dialog of an action key, on the tree
// and in the detail pane alike; other keys do nothing.
func (m *Model) actionKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Kill):
		return m.openDialog(model.ActionKill, false)
	case key.Matches(msg, k.KillTree):
		return m.openDialog(model.ActionKill, true)
	case key.Matches(msg, k.Resume):
		return m.openDialog(model.ActionResume, false)
	case key.Matches(msg, k.Compact):
		return m.openDialog(model.ActionCompact, false)
	case key.Matches(msg, k.Merge):
		return m.openDialog(model.ActionMerge, false)
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

// setStatus shows s on the status line, as terminal text whatever it quotes.
func (m *Model) setStatus(s string, bad bool) {
	m.status, m.bad = clean(s), bad
	m.dirty = true
}

func (m *Model) applyTheme() {
	m.styles = NewStyles(m.themes.Themes[m.theme])
	m.help.Styles = m.styles.Help
	m.help.ShortSeparator = " · "
	m.dirty = true
}

// View renders the screen as Update laid it out (layout) and changes
// nothing else: the frame is cached and rebuilt only after a change, and
// only the rows on screen are rendered.
func (m *Model) View() tea.View {
	if m.dirty {
		m.frame = m.render()
		m.dirty = false
	}
	v := tea.NewView(m.frame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "dispatchtop"
	return v
}
