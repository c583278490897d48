package scanner

// The forest (SPEC §2). Edges come from three sources, strongest first: the
// parent's `.children` entry, the child's `parent_heartbeat`, directory
// nesting. The strongest wins; a disagreement flags `conflict` and names the
// losing parents; a cycle is broken at its weakest edge and flagged.

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
)

// Edge strengths, strongest last.
const (
	edgeNesting  = 1
	edgeDeclared = 2 // the child's parent_heartbeat
	edgeRegistry = 3 // the parent's .children
)

type candidate struct {
	parent   *model.Node
	strength int
}

type builder struct {
	roots []Root
	byDir map[string]*model.Node // by InfraDir
	nodes []*model.Node          // in creation order
	cands map[*model.Node][]candidate
	// entries[child][parent] is the last line of parent's registry naming child.
	entries map[*model.Node]map[*model.Node]*model.ChildEntry
	chosen  map[*model.Node]int // strength of the edge each node kept
	// resolved memoizes resolve: path -> the path with symlinks resolved.
	resolved map[string]string
	// worktree memoizes isWorktree: dir -> it holds a `.git` entry.
	worktree map[string]bool
}

// CopyFacts returns a copy of n holding only what ReadNodeDir reads: tree
// fields, tree flags and classification are cleared. The watcher hands
// copies to BuildForest so a published snapshot is never mutated.
func CopyFacts(n *model.Node) *model.Node {
	c := &model.Node{
		Root: n.Root, InfraDir: n.InfraDir, HeartbeatPath: n.HeartbeatPath,
		HasHeartbeat: n.HasHeartbeat, Heartbeat: n.Heartbeat, HeartbeatRaw: n.HeartbeatRaw,
		BeatMtime: n.BeatMtime, Legacy: n.Legacy, LegacyPID: n.LegacyPID,
		Registry: n.Registry, RegistryPath: n.RegistryPath, RegistryMtime: n.RegistryMtime,
		RegistrySize: n.RegistrySize, RegistryCompacting: n.RegistryCompacting, Cfa: n.Cfa, Retries: n.Retries, Blocked: n.Blocked,
		ActivityMtime: n.ActivityMtime, Merged: n.Merged, ResumePending: n.ResumePending,
		ResumeMtime: n.ResumeMtime, DeclaredParent: n.DeclaredParent,
	}
	c.Problems = append([]model.Problem(nil), n.Problems...)
	if n.HasScanFlag(model.FlagUnreadable) {
		c.ScanFlags = []model.Flag{model.FlagUnreadable}
	}
	return c
}

// BuildForest links nodes (facts as read by ReadNodeDir or Discover) into
// the forest of SPEC §2 and returns an unclassified snapshot: ids assigned,
// parents chosen, registry entries attached, nodes added for registry
// entries whose heartbeat does not exist (missing) or that point outside
// every root (outside_root, not read), sessions and siblings sorted by id.
// problems (the walk's) head the snapshot's Problems, followed by every
// node's. BuildForest sets the tree fields of the nodes it is given: pass
// CopyFacts copies of nodes that belong to a published snapshot.
func BuildForest(roots []Root, nodes []*model.Node, problems []model.Problem) *model.Snapshot {
	b := &builder{
		roots:   roots,
		byDir:   make(map[string]*model.Node, len(nodes)),
		cands:   make(map[*model.Node][]candidate, len(nodes)),
		entries: map[*model.Node]map[*model.Node]*model.ChildEntry{},
		chosen:  make(map[*model.Node]int, len(nodes)),
	}
	sorted := append([]*model.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].InfraDir < sorted[j].InfraDir })
	for _, n := range sorted {
		if _, dup := b.byDir[n.InfraDir]; dup {
			continue // the same dir reached twice (a root given twice)
		}
		resetTree(n)
		b.byDir[n.InfraDir] = n
		b.nodes = append(b.nodes, n)
	}
	read := len(b.nodes)
	for _, p := range b.nodes[:read] {
		b.registryEdges(p)
	}
	for _, c := range b.nodes[:read] {
		b.declaredEdge(c)
	}
	// Registry targets found on disk above may have their own parent_heartbeat.
	for i := read; i < len(b.nodes); i++ {
		if n := b.nodes[i]; !n.HasScanFlag(model.FlagOutsideRoot) {
			b.declaredEdge(n)
		}
	}
	for _, n := range b.nodes {
		b.nestingEdge(n)
	}
	for _, n := range b.nodes {
		n.ID = b.id(n)
	}
	b.choose()
	b.breakCycles()
	return b.snapshot(problems)
}

// resetTree clears what a previous BuildForest set, keeping read flags.
func resetTree(n *model.Node) {
	n.ID, n.ParentID, n.Parent, n.Children, n.Entry, n.OtherParents = "", "", nil, nil, nil, nil
	var keep []model.Flag
	for _, f := range n.ScanFlags {
		if f == model.FlagUnreadable {
			keep = append(keep, f)
		}
	}
	n.ScanFlags = keep
}

func (b *builder) addCandidate(child, parent *model.Node, strength int) {
	if child == parent {
		addScanFlag(child, model.FlagCycle) // names itself as its parent
		return
	}
	for i, c := range b.cands[child] {
		if c.parent == parent {
			b.cands[child][i].strength = max(c.strength, strength)
			return
		}
	}
	b.cands[child] = append(b.cands[child], candidate{parent, strength})
}

// registryEdges adds an edge for every parseable line of p's `.children`.
func (b *builder) registryEdges(p *model.Node) {
	for i := range p.Registry {
		e := p.Registry[i].Entry
		if e == nil {
			continue
		}
		hb := e.Heartbeat
		if !filepath.IsAbs(hb) {
			hb = filepath.Join(p.InfraDir, hb)
		}
		hb = filepath.Clean(hb)
		child := b.lookup(filepath.Dir(hb), filepath.Base(hb), true)
		if child == nil {
			continue
		}
		b.addCandidate(child, p, edgeRegistry)
		if child != p {
			if b.entries[child] == nil {
				b.entries[child] = map[*model.Node]*model.ChildEntry{}
			}
			b.entries[child][p] = e // the last line naming it wins
		}
	}
}

// declaredEdge adds the edge the child's parent_heartbeat declares.
func (b *builder) declaredEdge(c *model.Node) {
	if c.Heartbeat == nil || c.Heartbeat.ParentHeartbeat == "" {
		return
	}
	hb := c.Heartbeat.ParentHeartbeat
	if !filepath.IsAbs(hb) {
		hb = filepath.Join(c.InfraDir, hb)
	}
	hb = filepath.Clean(hb)
	// A parent that does not exist inside a root is not invented: only a
	// registry entry makes a missing node. One outside every root is shown.
	if p := b.lookup(filepath.Dir(hb), filepath.Base(hb), false); p != nil {
		b.addCandidate(c, p, edgeDeclared)
	}
}

// nestingEdge links a node to the nearest node dir above it in its root.
func (b *builder) nestingEdge(n *model.Node) {
	if n.Root == "" {
		return
	}
	for d := filepath.Dir(n.InfraDir); within(n.Root, d); d = filepath.Dir(d) {
		if p, ok := b.byDir[d]; ok {
			b.addCandidate(n, p, edgeNesting)
			return
		}
		if d == n.Root {
			return
		}
	}
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
	n := &model.Node{InfraDir: dir, HeartbeatPath: filepath.Join(dir, file), ScanFlags: []model.Flag{model.FlagOutsideRoot}}
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
		if within(r.Resolved, real) {
			return r, filepath.Join(r.Path, strings.TrimPrefix(real[len(r.Resolved):], string(filepath.Separator))), true
		}
	}
	return nil, "", false
}

// unresolvable stands for a path that leads through a symlink loop: it is
// inside no root.
const unresolvable = "\x00unresolvable"

// resolve is p with every symlink resolved, for a p that need not exist:
// one lstat per path, the parents' answers remembered (a registry of
// 100,000 missing children under one dir resolves that dir once).
func (b *builder) resolve(p string) string {
	if real, ok := b.resolved[p]; ok {
		return real
	}
	if b.resolved == nil {
		b.resolved = map[string]string{}
	}
	var real string
	fi, err := os.Lstat(p)
	switch parent := filepath.Dir(p); {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = r
		} else {
			real = unresolvable + p
		}
	case parent == p:
		real = p // the filesystem root
	default:
		real = filepath.Join(b.resolve(parent), filepath.Base(p))
		if strings.HasPrefix(real, unresolvable) {
			real = unresolvable + p
		}
	}
	b.resolved[p] = real
	return real
}

// id is the infra dir relative to its root, '/'-separated, prefixed with the
// root's name when there are several; an outside node keeps its path.
func (b *builder) id(n *model.Node) string {
	if n.Root == "" {
		return filepath.ToSlash(n.InfraDir)
	}
	prefix := ""
	for _, r := range b.roots {
		if r.Path == n.Root {
			prefix = r.Prefix
			break
		}
	}
	rel, err := filepath.Rel(n.Root, n.InfraDir)
	if err != nil {
		return filepath.ToSlash(n.InfraDir)
	}
	rel = filepath.ToSlash(rel)
	switch {
	case prefix == "":
		return rel
	case rel == ".":
		return prefix
	}
	return prefix + "/" + rel
}

// choose keeps the strongest candidate of every node (ties to the smaller
// id) and names the others.
func (b *builder) choose() {
	for _, n := range b.nodes {
		cs := b.cands[n]
		if len(cs) == 0 {
			continue
		}
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].strength != cs[j].strength {
				return cs[i].strength > cs[j].strength
			}
			return cs[i].parent.ID < cs[j].parent.ID
		})
		n.Parent = cs[0].parent
		b.chosen[n] = cs[0].strength
		for _, c := range cs[1:] {
			n.OtherParents = append(n.OtherParents, c.parent.ID)
		}
		if len(n.OtherParents) > 0 {
			addScanFlag(n, model.FlagConflict)
		}
		if e := b.entries[n][n.Parent]; e != nil {
			n.Entry = e
		}
	}
}

// breakCycles cuts every cycle of parent links at its weakest edge (ties to
// the smallest id) and flags its members. The parent cut off is appended
// last to the OtherParents of the node left without one: the classifier
// names the edge from there.
func (b *builder) breakCycles() {
	const (
		unseen = iota
		onPath
		finished
	)
	state := make(map[*model.Node]int, len(b.nodes))
	ordered := append([]*model.Node(nil), b.nodes...)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].ID < ordered[j].ID })
	for _, start := range ordered {
		var path []*model.Node
		n := start
		for n != nil && state[n] == unseen {
			state[n] = onPath
			path = append(path, n)
			n = n.Parent
		}
		if n != nil && state[n] == onPath {
			var cycle []*model.Node
			for i := len(path) - 1; i >= 0; i-- {
				cycle = append(cycle, path[i])
				if path[i] == n {
					break
				}
			}
			cut := cycle[0]
			for _, c := range cycle {
				addScanFlag(c, model.FlagCycle)
				if b.chosen[c] < b.chosen[cut] || b.chosen[c] == b.chosen[cut] && c.ID < cut.ID {
					cut = c
				}
			}
			cut.OtherParents = append(cut.OtherParents, cut.Parent.ID)
			cut.Parent, cut.Entry = nil, nil
		}
		for _, p := range path {
			state[p] = finished
		}
	}
}

// snapshot links children, sorts and collects problems.
func (b *builder) snapshot(problems []model.Problem) *model.Snapshot {
	snap := &model.Snapshot{ByID: make(map[string]*model.Node, len(b.nodes))}
	for _, r := range b.roots {
		snap.Roots = append(snap.Roots, r.Path)
	}
	for _, n := range b.nodes {
		snap.ByID[n.ID] = n
		if n.Parent == nil {
			snap.Sessions = append(snap.Sessions, n)
			continue
		}
		n.ParentID = n.Parent.ID
		n.Parent.Children = append(n.Parent.Children, n)
	}
	byID := func(ns []*model.Node) {
		sort.Slice(ns, func(i, j int) bool { return ns[i].ID < ns[j].ID })
	}
	byID(snap.Sessions)
	snap.Problems = append(snap.Problems, problems...)
	for _, s := range snap.Sessions {
		s.Walk(func(n *model.Node) {
			byID(n.Children)
			snap.Problems = append(snap.Problems, n.Problems...)
		})
	}
	return snap
}
