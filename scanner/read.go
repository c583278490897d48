package scanner

// Reading the facts of one infra dir (SPEC §1). Every read or parse error
// becomes a problem of the node (and `unreadable` where the file is the
// node's own); a file that vanished between listing and reading is skipped.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// errTooLarge is the problem of a single-document file over the cap.
var errTooLarge = fmt.Errorf("file larger than %d MiB", protocol.MaxDocumentSize>>20)

// ReadNodeDir reads the facts of the infra dir dir, found under root: its
// heartbeat (or legacy `.running`), registry, CfA state, retry count,
// blocked sentinels, stream activity, merge and resume markers. Tree fields
// (ID, Parent, Children, Entry) are left for BuildForest. The error wraps
// fs.ErrNotExist when dir is gone or holds neither `.heartbeat` nor
// `.running`; read problems of its files are in the node's Problems.
func ReadNodeDir(root, dir string) (*model.Node, error) {
	return readNodeDir(root, dir, false)
}

// readNodeDir is ReadNodeDir, keeping no file bytes when omitRaw is set
// (Options.OmitRaw).
func readNodeDir(root, dir string, omitRaw bool) (*model.Node, error) {
	h, entries, err := openDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read node dir %s: %w", dir, err)
	}
	h.unclean = filepath.Clean(dir) != dir
	n := readNode(root, h, entries, &nodeReader{omitRaw: omitRaw})
	h.close()
	if n == nil {
		return nil, fmt.Errorf("read node dir %s: no %s or %s: %w", dir, protocol.HeartbeatFile, protocol.RunningFile, fs.ErrNotExist)
	}
	return n, nil
}

// isNodeDir reports whether a directory listing marks an infra dir.
func isNodeDir(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if name := e.Name(); name == protocol.HeartbeatFile || name == protocol.RunningFile {
			return true
		}
	}
	return false
}

// nodeReader is what one reader of node dirs keeps from node to node.
type nodeReader struct {
	// omitRaw: the heartbeat's bytes, the registry lines' and the CfA
	// history's are not kept (Options.OmitRaw).
	omitRaw bool
	// scratch takes the documents whose bytes are not kept, one after the
	// other: their parsers copy what they keep.
	scratch []byte
}

// scratchDocument is the size of document the scratch buffer grows to; a
// larger one is read into a buffer of its own.
const scratchDocument = 16 << 10

// buffer is where a document whose bytes are not kept is read.
func (r *nodeReader) buffer() []byte {
	if r.scratch == nil {
		r.scratch = make([]byte, 0, 1<<10)
	}
	return r.scratch
}

// keep takes back a scratch buffer a read may have grown.
func (r *nodeReader) keep(b []byte) {
	if cap(b) > cap(r.scratch) && cap(b) <= scratchDocument {
		r.scratch = b[:0]
	}
}

// readNode reads an infra dir from its listing; nil when it is not (or no
// longer) a node.
func readNode(root string, h dirHandle, entries []fs.DirEntry, r *nodeReader) *model.Node {
	l := nodeListing{root: root, h: h, r: r, n: &model.Node{Root: root, InfraDir: h.path},
		compacting: hasEntry(entries, protocol.CompactingFile)}
	for _, e := range entries {
		name := e.Name()
		if e.Type()&fs.ModeSymlink != 0 && readsContent(name) && l.linkedOutside(name) {
			continue
		}
		l.readEntry(e, name)
	}
	if l.hasMiddle && l.n.Blocked == nil {
		l.readMiddleBlocked()
	}
	return l.sentinels()
}

// nodeListing is one node dir being read from its listing: what the
// listing held, and the node its files make.
type nodeListing struct {
	root       string
	h          dirHandle
	r          *nodeReader
	n          *model.Node
	compacting bool   // `.children.compacting` is listed
	rootReal   string // the root's real path, once a link needed it

	hasHeartbeat, hasRunning, hasMiddle bool
	// A sentinel linked outside the root: present, never read.
	heartbeatOut, runningOut bool
}

// linkedOutside: name is a link that leads outside the root; a writable
// sessions dir must not make the scanner read (and the detail pane show) a
// file from elsewhere. Its presence still counts.
func (l *nodeListing) linkedOutside(name string) bool {
	path := l.h.file(name)
	target, out := escapesRoot(l.root, path, &l.rootReal)
	if !out {
		return false
	}
	addProblem(l.n, path, errOutside(target), true)
	l.heartbeatOut = l.heartbeatOut || name == protocol.HeartbeatFile
	l.runningOut = l.runningOut || name == protocol.RunningFile
	switch name {
	case protocol.BlockedFile:
		l.n.Blocked = &model.Blocked{Path: path}
	case protocol.ResumePendingFile:
		l.n.EditRare(func(r *model.Rare) { r.ResumePending = &model.ResumePending{} })
	}
	return true
}

// readEntry reads the file e of the listing, or notes it: a sentinel is
// read once the listing is done (sentinels).
func (l *nodeListing) readEntry(e fs.DirEntry, name string) {
	n, h, r := l.n, l.h, l.r
	switch name {
	case protocol.HeartbeatFile:
		l.hasHeartbeat = true
	case protocol.RunningFile:
		l.hasRunning = true
	case protocol.RegistryFile:
		l.readRegistry(name)
	case protocol.CfaFile:
		readCfaInto(n, h, name, r)
	case protocol.RetryCountFile:
		readRetriesInto(n, h, name, r)
	case protocol.BlockedFile:
		readBlockedInto(n, h, name, r)
	case protocol.MiddleDir:
		l.hasMiddle = e.IsDir()
	case protocol.MergedFile:
		n.Merged = true
	case protocol.ResumePendingFile:
		readResumePendingInto(n, h, name, r)
	default:
		if strings.HasSuffix(name, protocol.StreamSuffix) {
			if mtime, ok := h.lstatMtime(name); ok && mtime.After(n.ActivityMtime) {
				n.ActivityMtime = mtime
			}
		}
	}
}

// readRegistry reads `.children`, through the view of a compaction in
// flight when one is.
func (l *nodeListing) readRegistry(name string) {
	if l.compacting {
		readRegistryViewInto(l.n, l.h.path, l.h.file(name))
	} else {
		readRegistryInto(l.n, l.h, name)
	}
	if l.r.omitRaw {
		// Read just now: no copy of the node shares these lines yet.
		lines := l.n.RegistryLines()
		for i := range lines {
			lines[i].Raw = nil
		}
	}
}

// readMiddleBlocked reads `.middle/.blocked`, not in the listing: its link
// is checked here, as linkedOutside checks the listing's.
func (l *nodeListing) readMiddleBlocked() {
	path := filepath.Join(l.h.path, protocol.MiddleDir, protocol.BlockedFile)
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, out := escapesRoot(l.root, path, &l.rootReal); out {
			addProblem(l.n, path, errOutside(target), true)
			l.n.Blocked = &model.Blocked{Path: path} // presence still counts
			return
		}
	}
	readBlockedInto(l.n, dirHandle{path: filepath.Dir(path), fd: -1}, protocol.BlockedFile, l.r)
}

// sentinels reads the node's sentinel, the heartbeat before a legacy
// `.running`; nil when both vanished (the dir is being removed).
func (l *nodeListing) sentinels() *model.Node {
	n, h, r := l.n, l.h, l.r
	switch {
	case l.hasHeartbeat && readHeartbeatInto(n, h, protocol.HeartbeatFile, r):
	case l.heartbeatOut:
		n.HasHeartbeat, n.HeartbeatPath = true, filepath.Join(h.path, protocol.HeartbeatFile)
	case l.hasRunning && readRunningInto(n, h, protocol.RunningFile, r):
	case l.runningOut:
		n.Legacy = true
	default:
		return nil
	}
	return n
}

// readCfaInto reads `.cfa-state.json`; without the bytes, no history: its
// entries are the file's.
func readCfaInto(n *model.Node, h dirHandle, name string, r *nodeReader) {
	b, ok := readDocInto(n, h, name, r)
	if !ok {
		return
	}
	c, err := protocol.ParseCfaState(b, !r.omitRaw)
	r.keep(b)
	if err != nil {
		addProblem(n, h.file(name), fmt.Errorf("parse CfA state: %w", err), true)
		return
	}
	n.Cfa = c
}

// readRetriesInto reads `.retry-count.json`.
func readRetriesInto(n *model.Node, h dirHandle, name string, r *nodeReader) {
	b, ok := readDocInto(n, h, name, r)
	if !ok {
		return
	}
	rc, err := protocol.ParseRetryCount(b)
	r.keep(b)
	if err != nil {
		addProblem(n, h.file(name), fmt.Errorf("parse retry count: %w", err), true)
		return
	}
	n.Retries = rc
}

// readResumePendingInto reads the resume marker: present counts, parsed
// or not; gone since the listing, it does not.
func readResumePendingInto(n *model.Node, h dirHandle, name string, r *nodeReader) {
	path := h.file(name)
	b, fi, err := readDocument(h, name, r.buffer())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	rp, perr := protocol.ParseResumePending(b)
	r.keep(b)
	if err == nil && perr != nil {
		err = fmt.Errorf("parse resume marker: %w", perr)
	}
	if err != nil {
		addProblem(n, path, err, true)
	}
	n.EditRare(func(r *model.Rare) { r.ResumePending, r.ResumeMtime = &rp, fi.mtime })
}

// hasEntry reports whether a directory listing holds name.
func hasEntry(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name {
			return true
		}
	}
	return false
}

// readsContent reports whether the scanner reads the file's content (not
// only its mtime).
func readsContent(name string) bool {
	switch name {
	case protocol.HeartbeatFile, protocol.RunningFile, protocol.RegistryFile, protocol.CompactingFile, protocol.CfaFile, protocol.RetryCountFile, protocol.BlockedFile, protocol.ResumePendingFile:
		return true
	}
	return false
}

func errOutside(target string) error {
	return fmt.Errorf("symlink leads outside the root, to %s: not read", target)
}

// escapesRoot reports whether the symlink at path resolves outside root
// (rootReal caches root's own resolution). A link that does not resolve is
// left to the read, which reports why.
func escapesRoot(root, path string, rootReal *string) (string, bool) {
	if root == "" {
		return "", false
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	if *rootReal == "" {
		*rootReal = root
		if r, err := filepath.EvalSymlinks(root); err == nil {
			*rootReal = r
		}
	}
	return target, !within(*rootReal, target)
}

// readHeartbeatInto reads the heartbeat; false when it vanished.
func readHeartbeatInto(n *model.Node, h dirHandle, name string, r *nodeReader) bool {
	var buf []byte // kept as the node's HeartbeatRaw: a buffer of its own
	if r.omitRaw {
		buf = r.buffer()
	}
	b, fi, err := readDocument(h, name, buf)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	path := h.file(name)
	n.HeartbeatPath = path
	n.HasHeartbeat = true
	n.BeatMtime = fi.mtime
	if err != nil {
		addProblem(n, path, err, true)
		return true
	}
	if r.omitRaw {
		defer r.keep(b)
	} else {
		n.EditRare(func(r *model.Rare) { r.HeartbeatRaw = b })
	}
	hb, err := protocol.ParseHeartbeat(b)
	if err != nil {
		addProblem(n, path, fmt.Errorf("parse heartbeat: %w", err), true)
		if bad := (*protocol.BadFieldsError)(nil); !errors.As(err, &bad) {
			return true
		}
		// The fields that were read still count.
	}
	if hb.ParentHeartbeat == h.above {
		hb.ParentHeartbeat = h.above // one string for the path named twice
	}
	n.Heartbeat = &hb
	return true
}

// readRunningInto reads a legacy `.running`; false when it vanished.
func readRunningInto(n *model.Node, h dirHandle, name string, r *nodeReader) bool {
	b, fi, err := readDocument(h, name, r.buffer())
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	n.Legacy = true
	n.BeatMtime = fi.mtime
	if err != nil {
		addProblem(n, h.file(name), err, true)
		return true
	}
	pid, err := protocol.ParseLegacyPID(b)
	r.keep(b)
	if err != nil {
		addProblem(n, h.file(name), fmt.Errorf("parse legacy pid: %w", err), true)
		return true
	}
	n.EditRare(func(r *model.Rare) { r.LegacyPID = pid })
	return true
}

// readBlockedInto records a blocked sentinel; its presence counts even when
// it cannot be parsed.
func readBlockedInto(n *model.Node, h dirHandle, name string, r *nodeReader) {
	b, fi, err := readDocument(h, name, r.buffer())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	path := h.file(name)
	n.Blocked = &model.Blocked{Path: path, Since: fi.mtime}
	if err != nil {
		addProblem(n, path, err, true)
		return
	}
	bl, err := protocol.ParseBlocked(b)
	r.keep(b)
	if err != nil {
		addProblem(n, path, fmt.Errorf("parse blocked sentinel: %w", err), true)
		return
	}
	bl.Path, bl.Since = path, fi.mtime
	n.Blocked = &bl
}

// readDocInto reads a single-document file into the reader's scratch
// buffer (the caller gives it back with keep), recording a problem on
// failure; ok is false when the content is not usable (or the file
// vanished).
func readDocInto(n *model.Node, h dirHandle, name string, r *nodeReader) ([]byte, bool) {
	b, _, err := readDocument(h, name, r.buffer())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		addProblem(n, h.file(name), err, true)
		return nil, false
	}
	return b, true
}

// readRegistryInto streams the node's `.children`, up to protocol.MaxRegistryRead.
func readRegistryInto(n *model.Node, h dirHandle, name string) {
	path := h.file(name)
	f, fi, err := h.openReader(name, path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	n.HasRegistry = true
	if err != nil {
		addProblem(n, path, err, true)
		return
	}
	defer f.Close()
	size := fi.Size
	// Up to the size fstat gave: lines appended since are read next time,
	// and the read that would only report EOF is saved.
	lines, err := protocol.ReadRegistry(io.LimitReader(f, size), size, protocol.MaxRegistryRead)
	n.SetRegistry(lines, fi.ModTime, size)
	if err != nil {
		addProblem(n, path, fmt.Errorf("read registry: %w", err), true)
	}
	addLineProblems(n, path, lines)
}

// readRegistryViewInto reads the registry of a node whose compaction is not
// finished (SPEC §5.3): `.children`, then the lines of `.children.compacting`
// not carried over yet, each line once. Nothing is written: finishing the
// compaction is for actions, and for a watcher allowed to.
func readRegistryViewInto(n *model.Node, dir, path string) {
	compacting := filepath.Join(dir, protocol.CompactingFile)
	n.EditRare(func(r *model.Rare) { r.RegistryCompacting = compacting })
	v, err := protocol.ReadView(dir, protocol.MaxRegistryRead)
	if v.Info == nil {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			n.HasRegistry = true
			addProblem(n, path, err, true)
		}
		return
	}
	n.HasRegistry = true
	lines := protocol.ParseRegistry(v.Registry)
	for _, l := range protocol.ParseRegistry(v.Pending) {
		l.Number += int32(len(lines))
		lines = append(lines, l)
	}
	n.SetRegistry(lines, v.Info.ModTime(), v.Info.Size())
	if err != nil {
		addProblem(n, compacting, err, true)
	}
	addLineProblems(n, path, lines)
}

// addLineProblems adds the problem of a registry's unparseable lines.
func addLineProblems(n *model.Node, path string, lines []model.RegistryLine) {
	var bad int
	var first string
	for _, l := range lines {
		if l.Err == "" || l.Torn || l.Err == "empty line" {
			continue // a torn last line is an append in flight, not corruption
		}
		if bad == 0 {
			first = fmt.Sprintf("line %d: %s", l.Number, l.Err)
		}
		bad++
	}
	switch {
	case bad == 1:
		addProblem(n, path, errors.New("unparseable "+first), true)
	case bad > 1:
		addProblem(n, path, fmt.Errorf("%d unparseable lines, first %s", bad, first), true)
	}
}

// readDocument reads a single-document file capped at
// protocol.MaxDocumentSize, into buf when it fits (nil: a buffer of its
// own). The size and mtime are returned whenever the file exists (from
// stat when it cannot be opened), so the mtime of an oversized or
// unreadable heartbeat still counts.
func readDocument(h dirHandle, name string, buf []byte) ([]byte, docInfo, error) {
	b, opened, err := h.readDocument(name, protocol.MaxDocumentSize, buf)
	info := docInfo{size: opened.Size, mtime: opened.ModTime}
	switch {
	case errors.Is(err, protocol.ErrTooLarge):
		return nil, info, errTooLarge
	case err != nil && info.mtime.IsZero() && !errors.Is(err, fs.ErrNotExist):
		// Present but not openable (permission, a socket): its mtime is
		// still the beat, and liveness needs it.
		if fi, serr := os.Stat(h.file(name)); serr == nil {
			info.size, info.mtime = fi.Size(), fi.ModTime()
		}
	}
	return b, info, err
}

// docInfo is what fstat said about a document; zero when it could not be
// opened.
type docInfo struct {
	size  int64
	mtime time.Time
}

// addProblem records a problem on the node; unreadable marks the node's own
// file as failing (the `unreadable` flag).
func addProblem(n *model.Node, path string, err error, unreadable bool) {
	n.AddProblem(model.Problem{Path: path, Error: termtext.OneLine(err.Error(), 0)})
	if unreadable {
		addScanFlag(n, model.FlagUnreadable)
	}
}

func addScanFlag(n *model.Node, f model.Flag) {
	if !n.HasScanFlag(f) {
		n.EditRare(func(r *model.Rare) { r.ScanFlags = append(r.ScanFlags, f) })
	}
}

// file is the path of the directory's entry name.
func (h dirHandle) file(name string) string {
	if name == protocol.HeartbeatFile && h.heartbeat != "" {
		return h.heartbeat
	}
	if h.unclean {
		return filepath.Join(h.path, name)
	}
	return joinClean(h.path, name)
}

// joinClean is filepath.Join(dir, name) for a clean dir and a name from its
// listing (no separator, not "." or ".."), without Join's cleaning pass: a
// scan joins every name it lists.
func joinClean(dir, name string) string {
	if dir == "" || dir[len(dir)-1] == filepath.Separator {
		return filepath.Join(dir, name)
	}
	return dir + string(filepath.Separator) + name
}

// openReader opens the directory's entry name to read, relative to the open
// directory when there is one.
func (h dirHandle) openReader(name, path string) (io.ReadCloser, protocol.Info, error) {
	if h.fd < 0 {
		return protocol.OpenReader(path)
	}
	return protocol.OpenReaderAt(h.fd, name, path)
}
