package ui

import (
	"slices"
	"testing"

	"charm.land/bubbles/v2/key"
)

// Every binding the `?` screen lists does something on the tree: it is a
// row of the tree's key table, an action's key (actionKey) or a key of
// every mode (globalKey). A binding added to the keyMap and to the help
// but to none of them would be a key that does nothing.
func TestEveryHelpedKeyIsHandledOnTheTree(t *testing.T) {
	m := newTestModel(t, 120, 40, Options{Initial: demoSnapshot()})
	k := m.keys
	handled := []key.Binding{k.Quit, k.Help, k.Back, k.Kill, k.KillTree, k.Resume, k.Compact, k.Merge}
	for _, a := range m.treeKeyTable() {
		handled = append(handled, a.binding)
	}
	for _, group := range k.FullHelp() {
		for _, b := range group {
			if !slices.ContainsFunc(handled, func(h key.Binding) bool { return slices.Equal(h.Keys(), b.Keys()) }) {
				t.Errorf("%s (%s) is in the help but no handler matches it", b.Help().Key, b.Help().Desc)
			}
		}
	}
}
