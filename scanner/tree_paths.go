package scanner

// Where a path named in a file leads (SPEC §2): the builder's lookups of
// infra dirs, inside a root or outside every one, with symlinks resolved
// once and the walk's skipping rules applied to paths it never walked.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// splitNamed is the directory and the file name of the path named, a path
// read from a file of the node dir dir (absolute, or relative to dir):
// filepath.Dir and filepath.Base of it made absolute and clean. The usual
// path is absolute and clean already: it is split without Clean's passes,
// a tenth of building the forest.
func splitNamed(named, dir string) (string, string) {
	if isCleanAbs(named) {
		i := strings.LastIndexByte(named, '/')
		return parentOfClean(named), named[i+1:]
	}
	if !filepath.IsAbs(named) {
		named = filepath.Join(dir, named)
	}
	named = filepath.Clean(named)
	return filepath.Dir(named), filepath.Base(named)
}

// isCleanAbs reports whether p is absolute and left as it is by
// filepath.Clean, the root itself excepted: no empty, "." or ".." element,
// no trailing separator.
func isCleanAbs(p string) bool {
	if filepath.Separator != '/' || len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if elem := p[start:i]; elem == "" || elem == "." || elem == ".." {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// parentOfClean is filepath.Dir of a path isCleanAbs accepts (or the
// root), without Clean's pass.
func parentOfClean(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// isNodeDirOnDisk reports whether dir holds a heartbeat or a `.running`;
// two lstats per dir, remembered.
func (b *builder) isNodeDirOnDisk(dir string) bool {
	if is, ok := b.nodeDir[dir]; ok {
		return is
	}
	if b.nodeDir == nil {
		b.nodeDir = map[string]bool{}
	}
	is := false
	for _, name := range []string{protocol.HeartbeatFile, protocol.RunningFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			is = true
			break
		}
	}
	b.nodeDir[dir] = is
	return is
}

// lookup finds the node of infra dir dir, named by a path in a file. Inside
// a root, a dir not walked is read when its heartbeat exists, else made a
// missing node (when create is set); outside every root (symlinks resolved)
// it becomes an outside_root node whose files are not read.
func (b *builder) lookup(dir, file string, create bool) *model.Node {
	if n, ok := b.byDir[dir]; ok {
		return n
	}
	root, lex, inside := b.locate(dir)
	if inside {
		if n, ok := b.byDir[lex]; ok {
			return n
		}
		// Where the walk never goes a file's say-so does not lead either: no node, not even a missing one.
		if b.skipped(root, lex) {
			return nil
		}
		// A node the walk did not reach (depth bound, appeared or vanished
		// during it) or one reached through a symlink inside the root.
		if n, err := ReadNodeDir(root.Path, lex); err == nil {
			n.Traits = root.nativeTraits(lex)
			b.add(n)
			return n
		}
		if !create {
			return nil
		}
		n := &model.Node{Root: root.Path, InfraDir: lex, HeartbeatPath: filepath.Join(lex, file)}
		b.add(n)
		return n
	}
	n := &model.Node{InfraDir: dir, HeartbeatPath: filepath.Join(dir, file), Rare: &model.Rare{ScanFlags: []model.Flag{model.FlagOutsideRoot}}}
	b.add(n)
	return n
}

// skipped reports whether the walk would never have reached dir below
// root: a directory on the way is `.git`, `node_modules` or matched by an
// --ignore glob, or a git worktree (a directory holding a `.git` entry, the
// root itself excepted).
func (b *builder) skipped(root *Root, dir string) bool {
	rel, err := filepath.Rel(root.Path, dir)
	if err != nil || rel == "." {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for k, seg := range segs {
		if skipDir(root.Ignore, seg, strings.Join(segs[:k+1], "/")) {
			return true
		}
	}
	// The walk reads a worktree that is a node dir, but nothing below it.
	for k := 1; k < len(segs); k++ {
		if b.isWorktree(filepath.Join(root.Path, filepath.FromSlash(strings.Join(segs[:k], "/")))) {
			return true
		}
	}
	return false
}

// isWorktree reports whether dir holds a `.git` entry; one lstat per dir.
func (b *builder) isWorktree(dir string) bool {
	if wt, ok := b.worktree[dir]; ok {
		return wt
	}
	if b.worktree == nil {
		b.worktree = map[string]bool{}
	}
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	b.worktree[dir] = err == nil
	return err == nil
}

func (b *builder) add(n *model.Node) {
	b.byDir[n.InfraDir] = n
	b.nodes = append(b.nodes, n)
}

// locate maps dir to its root and its path as the walk would name it,
// resolving symlinks so a path escaping through one counts as outside.
func (b *builder) locate(dir string) (*Root, string, bool) {
	real := b.resolve(dir)
	for i := range b.roots {
		r := &b.roots[i]
		if r.walked() && within(r.Resolved, real) {
			return r, filepath.Join(r.Path, strings.TrimPrefix(real[len(r.Resolved):], string(filepath.Separator))), true
		}
	}
	return nil, "", false
}

// outsideEveryRoot reports whether dir, a directory a store's record names
// (a worktree, a session dir), lies outside every root once its symlinks
// are resolved; a path that is not absolute is placed nowhere.
func (b *builder) outsideEveryRoot(dir string) bool {
	if !filepath.IsAbs(dir) {
		return true
	}
	if b.areas == nil {
		b.areas = RootAreas(b.roots)
	}
	real := b.resolve(filepath.Clean(dir))
	for _, a := range b.areas {
		if within(a, real) {
			return false
		}
	}
	return true
}

// RootAreas are the directories the roots hold, symlinks resolved: a
// root's own, or for a store whose root is a file (a database), the
// directory that holds it, where its journal lives too.
func RootAreas(roots []Root) []string {
	areas := make([]string, 0, len(roots))
	for _, r := range roots {
		area := r.Resolved
		if area == "" {
			continue
		}
		if fi, err := os.Stat(area); err == nil && !fi.IsDir() {
			area = filepath.Dir(area)
		}
		areas = append(areas, area)
	}
	return areas
}

// unresolvable stands for a path that leads through a symlink loop: it is
// inside no root.
const unresolvable = "\x00unresolvable"

// resolve is p with every symlink resolved, for a p that need not exist:
// one lstat per path, the parents' answers remembered (a registry of
// 100,000 missing children under one dir resolves that dir once), and
// none for a path whose parent is not there (the state dirs dispatchtop
// has not made yet, one a store's session, all under one missing dir).
func (b *builder) resolve(p string) string {
	if real, ok := b.resolved[p]; ok {
		return real
	}
	if b.resolved == nil {
		b.resolved, b.missing = map[string]string{}, map[string]bool{}
	}
	parent := filepath.Dir(p)
	if parent == p {
		b.resolved[p] = p // the filesystem root
		return p
	}
	realParent := b.resolve(parent)
	var fi fs.FileInfo
	err := error(fs.ErrNotExist)
	if !b.missing[parent] {
		lstat := b.lstat
		if lstat == nil {
			lstat = os.Lstat
		}
		fi, err = lstat(p)
	}
	var real string
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = r
		} else {
			real = unresolvable + p
		}
	case strings.HasPrefix(realParent, unresolvable):
		real = unresolvable + p
	default:
		real = filepath.Join(realParent, filepath.Base(p))
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		b.missing[p] = true
	}
	b.resolved[p] = real
	return real
}
