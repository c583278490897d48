package ui

import "charm.land/bubbles/v2/key"

// keyMap holds every binding; it is the help.KeyMap, so a disabled binding
// (an action under --readonly) vanishes from the help.
type keyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Collapse, Expand, Toggle                key.Binding
	CollapseAll, ExpandAll                  key.Binding
	NextAction, PrevAction                  key.Binding
	Filter, StateFilter, Sort, Mark         key.Binding
	Details, Events, EventScope             key.Binding
	Copy, Output, Answer                    key.Binding
	Kill, KillTree, Resume, Compact, Merge  key.Binding
	Pause, Follow, Theme, Help, Quit        key.Binding
	Back, Focus                             key.Binding
}

func newKeyMap(readonly bool) keyMap {
	k := keyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:         key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Bottom:      key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),
		Collapse:    key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "collapse")),
		Expand:      key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "expand")),
		Toggle:      key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		CollapseAll: key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "collapse all")),
		ExpandAll:   key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "expand all")),
		NextAction:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next to act on")),
		PrevAction:  key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous to act on")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Mark:        key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "mark")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		StateFilter: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "state filter")),
		Details:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Events:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		EventScope:  key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "events of subtree")),
		Copy:        key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy id")),
		Output:      key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "output in $PAGER")),
		Answer:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "answer")),
		Kill:        key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "kill")),
		KillTree:    key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "kill subtree")),
		Resume:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		Compact:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compact")),
		Merge:       key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "merge")),
		Pause:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Follow:      key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "follow")),
		Theme:       key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "theme")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Back:        key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Focus:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus events")),
	}
	if readonly {
		for _, b := range []*key.Binding{&k.Kill, &k.KillTree, &k.Resume, &k.Compact, &k.Merge, &k.Mark, &k.Answer} {
			b.SetEnabled(false)
		}
	}
	return k
}

// ShortHelp is the one-line help under the tree; it ends with help and
// quit, which renderShortHelp keeps whatever the width cuts.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.NextAction, k.Toggle, k.Details, k.Filter, k.StateFilter, k.Sort, k.Mark, k.Kill, k.Resume, k.Help, k.Quit}
}

// FullHelp is the `?` screen, in columns of at most six, so that every
// key and the notes under them fit an 80×24 terminal.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Collapse, k.Expand, k.Toggle, k.CollapseAll, k.ExpandAll, k.Follow},
		{k.NextAction, k.PrevAction, k.Filter, k.StateFilter, k.Sort, k.Mark},
		{k.Details, k.Events, k.EventScope, k.Output, k.Answer, k.Copy},
		{k.Kill, k.KillTree, k.Resume, k.Compact, k.Merge},
		{k.Focus, k.Pause, k.Theme, k.Help, k.Back, k.Quit},
	}
}

// detailKeys is the short help while the detail pane is open.
type detailKeys struct{ k keyMap }

func (d detailKeys) ShortHelp() []key.Binding {
	back := key.NewBinding(key.WithKeys("enter", "esc"), key.WithHelp("enter/esc", "back"))
	scroll := key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "g", "G"), key.WithHelp("↑↓ pgup/pgdn g/G", "scroll"))
	return []key.Binding{back, scroll, d.k.Output, d.k.Answer, d.k.Copy, d.k.Kill, d.k.KillTree, d.k.Resume, d.k.Compact, d.k.Merge, d.k.Events, d.k.Quit}
}

func (d detailKeys) FullHelp() [][]key.Binding { return d.k.FullHelp() }

// eventKeys is the short help while the event pane has the focus.
type eventKeys struct{ k keyMap }

func (e eventKeys) ShortHelp() []key.Binding {
	closeKey := key.NewBinding(key.WithKeys("esc", "e"), key.WithHelp("esc", "close"))
	scroll := key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "g", "G"), key.WithHelp("↑↓ pgup/pgdn g/G", "scroll"))
	tree := key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "tree"))
	return []key.Binding{closeKey, scroll, tree, e.k.EventScope}
}
