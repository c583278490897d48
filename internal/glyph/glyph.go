// Package glyph is the one table of the marks that stand for a state, a
// flag or an action on a terminal line (SPEC §6: every one reads without
// colour, from its glyph and its word). The --once text tree and the
// dashboard draw these, and the README's legend explains each of them: read
// [States], [Flags] and [Actions] in order to list them.
//
// Every glyph is one terminal cell wide (a test holds it), so a column that
// holds one is measured like any other text: in cells
// (github.com/charmbracelet/x/ansi.StringWidth), never in runes or bytes.
package glyph

import "github.com/dispatchtop/dispatchtop/model"

// StateGlyph is the mark of one state.
type StateGlyph struct {
	State model.State
	Glyph string
}

// FlagGlyph is the mark of one flag.
type FlagGlyph struct {
	Flag  model.Flag
	Glyph string
}

// ActionGlyph is the mark of one action.
type ActionGlyph struct {
	Action model.Action
	Glyph  string
}

// States marks every state, in model.States' order.
var States = []StateGlyph{
	{model.StateRunning, "●"},
	{model.StateDead, "✖"},
	{model.StateFinished, "✔"},
	{model.StateMissing, "○"},
}

// Flags marks every flag, in model.Flags' order. unknown_status has none
// of its own: it shares [Other].
var Flags = []FlagGlyph{
	{model.FlagStarting, "◔"},
	{model.FlagQuiet, "◌"},
	{model.FlagStalled, "◑"},
	{model.FlagKillCandidate, "◆"},
	{model.FlagBlocked, "⧗"},
	{model.FlagPaused, "‖"},
	{model.FlagOrphaned, "◇"},
	{model.FlagLegacy, "▫"},
	{model.FlagIdle, "◍"},
	{model.FlagUnreadable, "!"},
	{model.FlagPidUnverified, "¿"},
	{model.FlagConflict, "≠"},
	{model.FlagCycle, "↻"},
	{model.FlagOutsideRoot, "↗"},
	{model.FlagClockSkew, "±"},
}

// Actions marks every action but none, in model.Actions' order.
var Actions = []ActionGlyph{
	{model.ActionAnswer, "✎"},
	{model.ActionKill, "⊘"},
	{model.ActionWait, "◷"},
	{model.ActionMerge, "⇄"},
	{model.ActionSurface, "↑"},
	{model.ActionResume, "↺"},
	{model.ActionCompact, "⇊"},
}

// UnknownState marks a state the table does not know; Other a flag or an
// action it has no glyph for.
const (
	UnknownState = "?"
	Other        = "·"
)

// State is s's glyph, or UnknownState.
func State(s model.State) string {
	for _, g := range States {
		if g.State == s {
			return g.Glyph
		}
	}
	return UnknownState
}

// Flag is f's glyph, or Other.
func Flag(f model.Flag) string {
	for _, g := range Flags {
		if g.Flag == f {
			return g.Glyph
		}
	}
	return Other
}

// Action is a's glyph, or Other (none has no glyph).
func Action(a model.Action) string {
	for _, g := range Actions {
		if g.Action == a {
			return g.Glyph
		}
	}
	return Other
}
