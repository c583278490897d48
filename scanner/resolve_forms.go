package scanner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// resolveForm finds the node arg names in a form a screen or a document
// shows of its id other than the snapshot's own (idForms). found is false
// when no node has it; two nodes that both have it are an error.
func resolveForm(snap *model.Snapshot, arg string) (n *model.Node, found bool, err error) {
	arg = strings.Trim(filepath.ToSlash(arg), "/")
	if arg == "" {
		return nil, false, nil
	}
	var hits []string
	for id, cand := range snap.Nodes() {
		if slices.Contains(idForms(snap, cand), arg) {
			hits, n = append(hits, id), cand
		}
	}
	switch len(hits) {
	case 0:
		return nil, false, nil
	case 1:
		return n, true, nil
	}
	slices.Sort(hits)
	return nil, false, fmt.Errorf("node %q: names %d nodes (%s): give the whole id", arg, len(hits), strings.Join(hits, ", "))
}

// LocalID is n's id as a view of its root alone shows it: without the
// prefix (the root's base name) a view of several roots puts before it.
func LocalID(snap *model.Snapshot, n *model.Node) string {
	if len(snap.Roots) > 1 {
		if _, rest, ok := strings.Cut(n.ID, "/"); ok {
			return rest
		}
	}
	return n.ID
}

// idForms are the forms of n's id a screen or a document shows, beside
// the snapshot's own:
//   - as a view of its root alone shows it (LocalID), and with the root's
//     last segments before it: the prefix of a view of several roots
//     (`.sessions/20261122-091500`), or the id as seen from a root further
//     up the same tree (`jobs/job-103` for a store opened below `jobs`);
//   - without the leading segments of its session's id that name no node,
//     as a view of a root further down shows it (`job-103` for a store
//     opened at its top, where the session is `jobs/job-103`).
//
// A form never leaves out an ancestor node: a node's tail is not its id.
func idForms(snap *model.Snapshot, n *model.Node) []string {
	local := LocalID(snap, n)
	forms := []string{local}
	var segs []string
	for _, s := range strings.Split(filepath.ToSlash(filepath.Clean(n.Root)), "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	for k := 1; k <= len(segs); k++ {
		forms = append(forms, strings.Join(segs[len(segs)-k:], "/")+"/"+local)
	}
	top := n
	for top.Parent != nil {
		top = top.Parent
	}
	topLocal := LocalID(snap, top)
	if rest, ok := strings.CutPrefix(local, topLocal); ok {
		topSegs := strings.Split(topLocal, "/")
		for i := 1; i < len(topSegs); i++ {
			forms = append(forms, strings.Join(topSegs[i:], "/")+rest)
		}
	}
	return forms
}
