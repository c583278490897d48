package scanner

// Node records: the facts of every infra dir, the signatures of the files
// they were read from, and the marks that say what to read again. A beat
// is one stat; a registry change reads only the appended bytes; anything
// else reads the node again.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unique"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// nodeRecords is the facts of every infra dir and what must be read again.
type nodeRecords struct {
	byDir map[string]*liveNode
	// toRead marks infra dirs (or directories that may have become one)
	// with what of them to read again at the next flush.
	toRead map[string]dirtyKind
	// unpublished holds the infra dirs whose facts changed since the last
	// publish: their sessions are classified again.
	unpublished map[string]bool
	// readFailed holds the infra dirs whose last read failed: they are
	// read again at every poll.
	readFailed map[string]bool
}

func newNodeRecords() nodeRecords {
	return nodeRecords{byDir: map[string]*liveNode{}, toRead: map[string]dirtyKind{},
		unpublished: map[string]bool{}, readFailed: map[string]bool{}}
}

// sigName is a file name as the signatures keep it: one copy of each name
// (every node has the same few), held by a pointer. unique keeps a name
// while a signature holds it, so a writer naming its streams uniquely does
// not make the names grow for good.
type sigName = unique.Handle[string]

// The names of the protocol's files, made once.
var (
	heartbeatSigName = unique.Make(protocol.HeartbeatFile)
	runningSigName   = unique.Make(protocol.RunningFile)
	registrySigName  = unique.Make(protocol.RegistryFile)
	cfaSigName       = unique.Make(protocol.CfaFile)
	blockedSigName   = unique.Make(middleBlocked)
)

// internName is name as the signatures keep it.
func internName(name string) sigName {
	switch name {
	case protocol.HeartbeatFile:
		return heartbeatSigName
	case protocol.RunningFile:
		return runningSigName
	case protocol.RegistryFile:
		return registrySigName
	case protocol.CfaFile:
		return cfaSigName
	case middleBlocked:
		return blockedSigName
	}
	return unique.Make(name)
}

// liveNode is the engine's record of one infra dir: its facts and what
// polling compares against.
type liveNode struct {
	// n holds the facts: the node's own in the last published snapshot
	// (never written: the consumer may be reading it), or, once they
	// changed since, a node of the engine's own (own), which the next
	// publish of its session patches into its copy of the node.
	n   *model.Node
	own bool
	// session is the index of the node's session in the forest's Sessions
	// (-1 before the forest is built).
	session int32
	sigs    fileSigs // by name relative to the infra dir
	// reg is where the registry's next read starts; nil: read it whole
	// next time. Only a registry read since the node was (a parent's
	// `.children` appended to) has one: a record is 48 bytes, not 64.
	reg *registryTail
}

// registryTail is how much of a registry was read: the bytes of complete
// lines consumed, their newlines, and the file's inode.
type registryTail struct {
	off      int64
	newlines int
	ino      uint64
}

// fileSigs is a node's few file signatures; a slice is a fraction of a
// map's size, and there are 10,000s of nodes.
type fileSigs []namedSig

// namedSig is 32 bytes: a node has a few, and 100,000 nodes have them.
type namedSig struct {
	name sigName
	sig  fileSig
}

func (f fileSigs) get(name string) (fileSig, bool) {
	for _, e := range f {
		if e.name.Value() == name {
			return e.sig, true
		}
	}
	return fileSig{}, false
}

func (f *fileSigs) set(name string, sig fileSig) {
	for i := range *f {
		if (*f)[i].name.Value() == name {
			(*f)[i].sig = sig
			return
		}
	}
	*f = append(*f, namedSig{internName(name), sig})
}

// fileSig is what says a file changed: its mtime (Unix nanoseconds), size
// and inode.
type fileSig struct {
	mtime int64
	size  int64
	ino   uint64
}

func (s fileSig) modTime() time.Time { return time.Unix(0, s.mtime) }

// dirtyKind says what of an infra dir must be re-read.
type dirtyKind uint8

const (
	kindBeat     dirtyKind = 1 << iota // heartbeat mtime only (a beat)
	kindActivity                       // a stream file's mtime
	kindRegistry                       // .children changed: read the new bytes
	kindNode                           // anything else: re-read the node
)

// kindOf says what a change of a file named base means for its infra dir;
// 0 for files that do not matter (temporaries included).
func kindOf(base string) dirtyKind {
	switch base {
	case protocol.HeartbeatFile, protocol.RunningFile:
		return kindBeat
	case protocol.RegistryFile:
		return kindRegistry
	case protocol.CompactingFile, protocol.CfaFile, protocol.RetryCountFile, protocol.BlockedFile, protocol.MergedFile, protocol.ResumePendingFile:
		return kindNode
	}
	if strings.HasSuffix(base, protocol.StreamSuffix) {
		return kindActivity
	}
	return 0
}

// processDirty re-reads the marked infra dirs: a beat is one stat updating
// the mtime in place; a registry change reads only the appended bytes.
func (w *Watcher) processDirty() {
	for dir, kind := range w.nodes.toRead {
		delete(w.nodes.toRead, dir)
		ln := w.nodes.byDir[dir]
		if ln == nil {
			if _, ok := w.dirs.byPath[dir]; ok {
				w.readNode(dir)
			}
			continue
		}
		w.nodes.unpublished[dir] = true
		if kind&kindNode != 0 {
			w.readNode(dir)
			continue
		}
		if kind&kindBeat != 0 && !w.restatBeat(ln) {
			w.readNode(dir)
			continue
		}
		if kind&kindActivity != 0 {
			w.restatActivity(ln)
		}
		if kind&kindRegistry != 0 {
			w.readRegistryTail(ln)
		}
	}
}

// restatBeat updates a node's beat mtime in place; false when the file is
// not what was read (gone, or replaced): the node must be re-read.
func (w *Watcher) restatBeat(ln *liveNode) bool {
	name := protocol.HeartbeatFile
	if ln.n.Legacy {
		name = protocol.RunningFile
	}
	sig, err := statSig(filepath.Join(ln.n.InfraDir, name))
	old, had := ln.sigs.get(name)
	if err != nil || !had || sig.ino != old.ino || sig.size != old.size {
		return false
	}
	ln.sigs.set(name, sig)
	ln.facts().BeatMtime = sig.modTime()
	return true
}

// restatActivity recomputes the newest stream mtime of a node.
func (w *Watcher) restatActivity(ln *liveNode) {
	entries, err := os.ReadDir(ln.n.InfraDir)
	if err != nil {
		return
	}
	var newest time.Time
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), protocol.StreamSuffix) {
			continue
		}
		if sig, err := statSig(filepath.Join(ln.n.InfraDir, e.Name())); err == nil {
			ln.sigs.set(e.Name(), sig)
			if mt := sig.modTime(); mt.After(newest) {
				newest = mt
			}
		}
	}
	ln.facts().ActivityMtime = newest
}

// facts are ln's facts to write: those of a published snapshot are copied
// first.
func (ln *liveNode) facts() *model.Node {
	if !ln.own {
		c := *ln.n
		ln.n, ln.own = &c, true
	}
	return ln.n
}

// readNode (re-)reads an infra dir whole. When what it changed leaves the
// edges as they were, the next publish patches the new facts into its copy
// of the node; otherwise the forest is rebuilt before the next publish.
func (w *Watcher) readNode(dir string) {
	d := w.dirs.byPath[dir]
	if d == nil {
		return
	}
	w.stats.mu.Lock()
	w.stats.rereads++
	w.stats.mu.Unlock()
	w.nodes.unpublished[dir] = true
	// Signatures first: a change racing the read then shows up at the next
	// comparison instead of being lost.
	sigs := w.nodeSigs(dir)
	n, err := w.wo.readNodeDir(w.rootOf(dir), dir)
	old := w.nodes.byDir[dir]
	if err != nil {
		if old != nil {
			delete(w.nodes.byDir, dir)
			w.built.stale = true
		}
		if errors.Is(err, fs.ErrNotExist) {
			w.readRecovered(dir) // not a node any more: nothing to report
			return
		}
		// Retried at every poll: rebuild only when the error changes.
		if p, had := w.walkProbs[dir]; !had || p.Error != termtext.OneLine(err.Error(), 0) {
			w.addWalkProblem(dir, err)
		}
		w.nodes.readFailed[dir] = true
		return
	}
	w.readRecovered(dir)
	n.Traits = nativeTraitsIn(w.roots, dir)
	w.sharePaths(n)
	ln := &liveNode{n: n, own: true, session: -1, sigs: sigs}
	if old != nil {
		ln.session = old.session
	}
	w.nodes.byDir[dir] = ln
	if n.RegistryCompacting() != "" && w.wo.RecoverCompactions {
		// What it changes comes back as events (or a changed signature)
		// and is read then. Busy: a live compaction finishes its own. What
		// it cannot finish (a writer still holds the file) is shown as it
		// is, and tried again at the node's next change.
		_, _ = protocol.Recover(dir)
	}
	if old == nil || !sameEdges(old.n, n) {
		w.built.stale = true
	}
}

// readRecovered forgets the read error of dir, if it had one.
func (w *Watcher) readRecovered(dir string) {
	if w.nodes.readFailed[dir] {
		delete(w.nodes.readFailed, dir)
		delete(w.walkProbs, dir)
		w.built.stale = true
	}
}

// stale reports whether a node's files moved since its facts were read.
func stale(ln *liveNode) bool {
	n := ln.n
	name := protocol.HeartbeatFile
	if n.Legacy {
		name = protocol.RunningFile
	}
	if s, ok := ln.sigs.get(name); ok && s.mtime != n.BeatMtime.UnixNano() {
		return true
	}
	if s, ok := ln.sigs.get(protocol.RegistryFile); ok && (s.size != n.RegistrySize() || s.mtime != n.RegistryMtime().UnixNano()) {
		return true
	}
	return false
}

// restatNode stats the files a node was read from and marks what moved.
func (w *Watcher) restatNode(ln *liveNode) {
	dir := ln.n.InfraDir
	for _, e := range ln.sigs {
		name, old := e.name.Value(), e.sig
		sig, err := statSig(joinClean(dir, name))
		if err != nil {
			w.nodes.toRead[dir] |= kindNode
			continue
		}
		if sig == old {
			continue
		}
		switch kind := kindOf(filepath.Base(name)); {
		case kind == kindBeat && sig.ino == old.ino && sig.size == old.size:
			w.nodes.toRead[dir] |= kindBeat
		case kind == kindActivity || kind == kindRegistry:
			w.nodes.toRead[dir] |= kind
		default:
			w.nodes.toRead[dir] |= kindNode
		}
	}
}

// middleBlocked is the blocked sentinel's other place, relative to the
// infra dir.
var middleBlocked = filepath.Join(protocol.MiddleDir, protocol.BlockedFile)

// nodeSigs stats the files of an infra dir that matter for its facts.
func (w *Watcher) nodeSigs(dir string) fileSigs {
	h, entries, err := openDir(dir)
	if err != nil {
		return nil
	}
	defer h.close()
	return h.sigs(entries)
}

// sigsOf signs the files of an infra dir's listing that matter for its
// facts, by stat (which follows a link, as the reads do): those listed,
// and the blocked sentinel in its middle directory. The slice is as long as
// it needs to be: there is one per node.
func sigsOf(entries []fs.DirEntry, stat func(name string) (fileSig, error)) fileSigs {
	count := 0
	for _, e := range entries {
		if name := e.Name(); name == protocol.MiddleDir || kindOf(name) != 0 && !e.IsDir() {
			count++
		}
	}
	sigs := make(fileSigs, 0, count)
	for _, e := range entries {
		name := e.Name()
		if name == protocol.MiddleDir {
			name = middleBlocked
		} else if kindOf(name) == 0 || e.IsDir() {
			continue
		}
		if s, err := stat(name); err == nil {
			sigs = append(sigs, namedSig{internName(name), s})
		}
	}
	return sigs
}

func sigOf(fi os.FileInfo) fileSig {
	return fileSig{mtime: fi.ModTime().UnixNano(), size: fi.Size(), ino: fileIno(fi)}
}
