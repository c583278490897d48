package ui

// The frame's caches, owned by the renderer: what the last frame was drawn
// from and what it is made of, kept so that View redraws only what moved.

import "github.com/dispatchtop/dispatchtop/model"

// frameCache is everything the renderer keeps between frames. None of it is
// the model's state: each field can be rebuilt from the model, and is, when
// it is invalidated. Update invalidates the frame by setting dirty (layout
// then builds header, headerH and detail again, and the next View draws the
// whole frame); a tick sets aged where ageable (View then redraws only the
// cells the clock moves, reage); a theme or the hosts bump rowEpoch, which
// every cached row and the count lines are keyed on.
type frameCache struct {
	// text is the frame as View last handed it out.
	text string
	// dirty: the next View draws the frame again (Update runs layout
	// first); aged: only the clock moved since, and View redraws what it
	// moves (reage) where the last frame allows it (ageable). render sets
	// ageable; View clears dirty and aged.
	dirty, aged, ageable bool
	// lines are text's lines; the rows on screen start at rowsAt (-1: no
	// tree shown), the status line is at statusAt. Set by render, patched
	// in place by reage.
	lines            []string
	rowsAt, statusAt int
	// cols are the tree's columns as laid out for the screen's width
	// (columns): they depend on it alone, and are laid out again when it
	// changes or the table does (setColumns).
	cols columns
	// rowBuf and cells are the scratch a row is drawn in (renderRow), kept
	// for the next row.
	rowBuf []byte
	cells  []string
	// shown are the tree rows on screen as drawn, shownAt their index by
	// node; shownSpare is the array the next frame's rows go into
	// (renderTree, setShown). A row is reused while its rowKey holds.
	shown, shownSpare []shownRow
	shownAt           map[*model.Node]int
	// rowEpoch counts what redraws every row and the count lines (a theme,
	// the hosts): it is part of every rowKey and of counts.
	rowEpoch int
	// reasonWrap is the reason cell's style (Text) as a wrap, when it is
	// one (reasonWrapOK); set with the theme (applyTheme).
	reasonWrap   wrap
	reasonWrapOK bool
	// header is the header's lines and headerH their number, built by
	// layout after every change (dirty); reage redraws its first line.
	header  []string
	headerH int
	// counts is the header's count lines as last drawn (countLines).
	counts countsMemo
	// title and columnHead are the header's first line and the column
	// head as last drawn, with what they were drawn from (titleLine,
	// columnHeadLine): layout runs after every update, and most move
	// neither.
	title      lineMemo[titleKey]
	columnHead lineMemo[columnHeadKey]
	// helpBelow is how many lines of the `?` screen are below the screen,
	// as drawn (renderHelp).
	helpBelow int
	// helpLine is the short help of the tree or the details, as built for
	// helpBuilt (the mode, the focus, the width and the theme).
	helpLine  string
	helpBuilt helpKey
	// detail is the detail pane's lines, wrapped to the width; built by
	// layout in modeDetail, nil otherwise.
	detail []string
	// eventsBuilt is what the event viewport's lines were built from, and
	// eventsShown how many events they hold (layoutEvents).
	eventsBuilt eventsKey
	eventsShown int
}

// lineMemo is one line as last drawn and the key it was drawn from.
type lineMemo[K comparable] struct {
	key    K
	line   string
	filled bool
}

// get is the line for key: the one kept when key is what it was drawn
// from, else draw's, kept for the next.
func (l *lineMemo[K]) get(key K, draw func() string) string {
	if !l.filled || l.key != key {
		l.key, l.line, l.filled = key, draw(), true
	}
	return l.line
}
