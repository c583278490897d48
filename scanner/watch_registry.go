package scanner

// Following an append-only `.children` (SPEC §1): only the bytes past the
// last complete line are read; a shrunk file or a new inode (compaction
// rewrote it) is read whole again.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// maxRegistryTail caps one read of a registry (a 100,000-line registry is
// about 20 MiB); the rest is read at the next change.
const maxRegistryTail = 64 << 20

// readRegistryTail brings ln's registry up to date with the file. It marks
// the forest for a rebuild when lines were added or replaced (entries are
// edges), and otherwise only updates the size and mtime in place.
func (w *Watcher) readRegistryTail(ln *liveNode) {
	n := ln.n
	if n.RegistryCompacting() != "" {
		// Two files and a record make the registry while a compaction is
		// not finished: read whole, through protocol.ReadView.
		w.readNode(n.InfraDir)
		return
	}
	path := filepath.Join(n.InfraDir, protocol.RegistryFile)
	// Never a plain open: a FIFO planted here would block the watcher for
	// good. What is refused is re-read whole, which records the problem.
	f, err := protocol.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if n.HasRegistry || len(n.RegistryLines()) > 0 {
			w.readNode(n.InfraDir) // the registry went away: re-read the node
		}
		return
	}
	if err != nil {
		w.readNode(n.InfraDir)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		w.readNode(n.InfraDir)
		return
	}
	ino := fileIno(fi)
	whole := ln.reg == nil || ino != ln.reg.ino || fi.Size() < ln.reg.off
	var kept []model.RegistryLine
	var off int64
	var newlines int
	if !whole {
		off, newlines = ln.reg.off, ln.reg.newlines
		kept = n.RegistryLines()
		if k := len(kept); k > 0 && kept[k-1].Torn {
			kept = kept[:k-1] // a torn line is read again, whole this time
		}
	}
	want := fi.Size() - off
	if want > maxRegistryTail {
		want = maxRegistryTail
	}
	buf := make([]byte, max(want, 0))
	got, err := f.ReadAt(buf, off)
	buf = buf[:got]
	if err != nil && !errors.Is(err, io.EOF) {
		w.readNode(n.InfraDir)
		return
	}
	consumed := bytes.LastIndexByte(buf, '\n') + 1
	added := protocol.ParseRegistry(buf)
	w.shareEntryPaths(added)
	for i := range added {
		added[i].Number += int32(newlines)
		if w.opts.OmitRaw {
			added[i].Raw = nil // its bytes are buf's: they would keep it all
		}
	}
	lines := make([]model.RegistryLine, 0, len(kept)+len(added))
	lines = append(append(lines, kept...), added...)

	changed := whole || len(added) > 0 || len(lines) != len(n.RegistryLines())
	if ln.reg == nil {
		ln.reg = new(registryTail)
	}
	ln.reg.off = off + int64(consumed)
	ln.reg.newlines = newlines + bytes.Count(buf[:consumed], []byte{'\n'})
	ln.reg.ino = ino
	ln.sigs.set(protocol.RegistryFile, sigOf(fi))

	// The facts are replaced, never edited: published snapshots share them.
	facts := *n
	facts.SetRegistry(lines, fi.ModTime(), fi.Size())
	facts.HasRegistry = true // at path
	probs, flags := withRegistryProblems(n, path, lines)
	facts.EditRare(func(r *model.Rare) { r.Problems, r.ScanFlags = probs, flags })
	ln.n, ln.own = &facts, true
	w.nodes.unpublished[n.InfraDir] = true
	if changed {
		w.built.stale = true
	}
}

// withRegistryProblems replaces the registry's problems of n by those of
// lines (the wording the full read uses) and keeps `unreadable` only while
// some problem is left.
func withRegistryProblems(n *model.Node, path string, lines []model.RegistryLine) ([]model.Problem, []model.Flag) {
	var probs []model.Problem
	for _, p := range n.Problems() {
		if p.Path != path {
			probs = append(probs, p)
		}
	}
	var bad int
	var first string
	for _, l := range lines {
		if l.Err == "" || l.Torn || l.Err == "empty line" {
			continue
		}
		if bad == 0 {
			first = fmt.Sprintf("line %d: %s", l.Number, l.Err)
		}
		bad++
	}
	switch {
	case bad == 1:
		probs = append(probs, model.Problem{Path: path, Error: termtext.OneLine("unparseable "+first, 0)})
	case bad > 1:
		probs = append(probs, model.Problem{Path: path, Error: termtext.OneLine(fmt.Sprintf("%d unparseable lines, first %s", bad, first), 0)})
	}
	var flags []model.Flag
	for _, f := range n.ScanFlags() {
		if f != model.FlagUnreadable {
			flags = append(flags, f)
		}
	}
	if len(probs) > 0 {
		flags = append(flags, model.FlagUnreadable)
	}
	return probs, flags
}
