package remote

import (
	"slices"

	"github.com/dispatchtop/dispatchtop/model"
)

// interner keeps one copy of each word a watched host repeats in node
// after node (a state, a flag list, an action, a role, a source's name, a
// reason shared by many): a node built holds the copy, not the string its
// event decoded (SPEC §8: 2 KiB a remote node). The table is bounded, so a
// host that never repeats itself costs at most maxWords words; a nil
// interner keeps every string as given.
type interner struct {
	words     map[string]string
	flagLists map[string][]model.Flag
	cfas      map[string]*model.CfaState // a CfA state that says only its state
}

// Bounds of an interner: how many words and flag lists it keeps, and the
// longest word it keeps (a longer one is seldom repeated).
const (
	maxWords   = 4096
	maxWordLen = 96
)

// word is s's kept copy, s itself when it is kept from now on or cannot
// be.
func (in *interner) word(s string) string {
	if in == nil || s == "" || len(s) > maxWordLen {
		return s
	}
	if w, ok := in.words[s]; ok {
		return w
	}
	if len(in.words) < maxWords {
		if in.words == nil {
			in.words = map[string]string{}
		}
		in.words[s] = s
	}
	return s
}

// flags is the kept copy of a node's flag list (its capacity its length,
// so that an append never writes into another node's), or a copy of fs.
func (in *interner) flags(fs []model.Flag) []model.Flag {
	if len(fs) == 0 {
		return nil
	}
	if in == nil {
		return slices.Clone(fs)
	}
	var buf [128]byte
	key := buf[:0]
	for _, f := range fs {
		key = append(append(key, f...), 0)
	}
	if kept, ok := in.flagLists[string(key)]; ok {
		return kept
	}
	kept := make([]model.Flag, len(fs))
	for i, f := range fs {
		kept[i] = model.Flag(in.word(string(f)))
	}
	if len(in.flagLists) < maxWords {
		if in.flagLists == nil {
			in.flagLists = map[string][]model.Flag{}
		}
		in.flagLists[string(key)] = kept
	}
	return kept
}

// cfa is a CfA state that holds only state, shared by the nodes in it
// (a node's values are never changed once built).
func (in *interner) cfa(state string) *model.CfaState {
	if in == nil || len(state) > maxWordLen {
		return &model.CfaState{State: state}
	}
	if c, ok := in.cfas[state]; ok {
		return c
	}
	c := &model.CfaState{State: in.word(state)}
	if len(in.cfas) < maxWords {
		if in.cfas == nil {
			in.cfas = map[string]*model.CfaState{}
		}
		in.cfas[state] = c
	}
	return c
}
