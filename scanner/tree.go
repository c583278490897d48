package scanner

// The forest (SPEC §2). Edges come from three sources, strongest first: the
// parent's `.children` entry, the child's `parent_heartbeat`, directory
// nesting. The strongest wins; a disagreement flags `conflict` and names the
// losing parents; a cycle is broken at its weakest edge and flagged.
//
// Trees are scoped, so a `.children` entry never pulls a node out of the
// session its own word places it in: a node that declares itself a session
// lead (`parent_heartbeat: ""`, outside any other node's directory), or
// whose own parent (its parent_heartbeat's node, else the node whose
// directory holds it) lies in another session than the registering parent,
// is not adopted. The claim is a conflict on both sides instead: the node
// names the registering parent among its losing parents, the registering
// parent lists the node in RefusedChildren.

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// Edge strengths, strongest last.
const (
	edgeNesting  = 1
	edgeDeclared = 2 // the child's parent_heartbeat
	edgeRegistry = 3 // the parent's .children
)

type candidate struct {
	parent   *model.Node
	strength int   // the strongest source naming parent
	sources  uint8 // 1<<edge of every source naming parent
	// entry is the last line of parent's registry naming the child; nil
	// when its registry does not.
	entry *model.ChildEntry
}

func (c candidate) from(edge int) bool { return c.sources&(1<<edge) != 0 }

type builder struct {
	roots []Root
	byDir map[string]*model.Node // by InfraDir
	nodes []*model.Node          // in creation order
	// byKey holds the stores' nodes by their HeartbeatPath, for the edges
	// they declare by key (keyed); nil when no store node is given.
	byKey  map[string]*model.Node
	cands  map[*model.Node][]candidate
	chosen map[*model.Node]int // strength of the edge each node kept
	// firsts holds the first candidate of each node: most nodes have one
	// parent, named by every source, and a list of its own each was an
	// allocation a node.
	firsts []candidate
	// refused[child][parent]: parent's registry claim on child, not adopted
	// because child belongs to another session.
	refused map[*model.Node]map[*model.Node]bool
	// resolved memoizes resolve: path -> the path with symlinks resolved;
	// missing holds the paths resolve found not there.
	resolved map[string]string
	missing  map[string]bool
	// lstat is os.Lstat, or a test's count of the lookups resolve makes.
	lstat func(string) (fs.FileInfo, error)
	// worktree memoizes isWorktree: dir -> it holds a `.git` entry.
	worktree map[string]bool
	// nodeDir memoizes isNodeDirOnDisk: dir -> it holds a heartbeat or a
	// `.running`.
	nodeDir map[string]bool
	// areas are the directories the roots hold (RootAreas), once a
	// store's node asked.
	areas []string
}

// CopyFacts returns a copy of n holding only what ReadNodeDir reads: tree
// fields, tree flags and classification are cleared. The watcher hands
// copies to BuildForest so a published snapshot is never mutated.
func CopyFacts(n *model.Node) *model.Node {
	c := &model.Node{
		Root: n.Root, InfraDir: n.InfraDir, HeartbeatPath: n.HeartbeatPath,
		HasHeartbeat: n.HasHeartbeat, Heartbeat: n.Heartbeat,
		BeatMtime: n.BeatMtime, Legacy: n.Legacy,
		Registry: n.Registry, HasRegistry: n.HasRegistry,
		Cfa: n.Cfa, Retries: n.Retries, Blocked: n.Blocked,
		ActivityMtime: n.ActivityMtime, Merged: n.Merged,
		Source: n.Source, Traits: n.Traits, Rare: n.Rare,
	}
	// The rare facts but the tree's, which BuildForest finds again: of the
	// scan flags only unreadable is read.
	unreadable := n.HasScanFlag(model.FlagUnreadable)
	if len(n.OtherParents()) > 0 || len(n.RefusedChildren()) > 0 || len(n.ScanFlags()) != len(readFlags(unreadable)) {
		c.EditRare(func(r *model.Rare) {
			r.OtherParents, r.RefusedChildren, r.ScanFlags = nil, nil, readFlags(unreadable)
		})
	}
	return c
}

// readFlags are the scan flags a read sets: unreadable, or none.
func readFlags(unreadable bool) []model.Flag {
	if unreadable {
		return []model.Flag{model.FlagUnreadable}
	}
	return nil
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
	b, stored := newBuilder(roots, nodes)
	if len(stored) > 0 {
		b.addStoreNodes(stored)
	}
	b.addEdges()
	for _, n := range b.nodes {
		n.ID = b.id(n)
	}
	b.choose()
	b.breakCycles()
	b.keepSessionsApart()
	return b.snapshot(problems)
}

// newBuilder is a builder holding the nodes of the file protocol, by dir,
// in order (the first of a dir reached twice, as by a root given twice);
// stored are the nodes of other sources' stores, for addStoreNodes.
func newBuilder(roots []Root, nodes []*model.Node) (b *builder, stored []*model.Node) {
	// Only the nodes of the file protocol are found by their dir: a
	// store's million rows must not size that map.
	stores := 0
	for _, n := range nodes {
		if isStoreNode(n) {
			stores++
		}
	}
	b = &builder{
		roots:   roots,
		byDir:   make(map[string]*model.Node, len(nodes)-stores),
		nodes:   make([]*model.Node, 0, len(nodes)+(len(nodes)-stores)/8),
		cands:   make(map[*model.Node][]candidate, len(nodes)),
		chosen:  make(map[*model.Node]int, len(nodes)),
		refused: map[*model.Node]map[*model.Node]bool{},
	}
	// The walk's nodes come sorted by dir, the stores' after them, each
	// store's in its own order: only the walk's are kept in dir order, and
	// only sorted when they are not (a sort of them all with the stores'
	// was a fifth of what 1,850 store nodes cost the build).
	walked := make([]*model.Node, 0, len(nodes)-stores)
	stored = make([]*model.Node, 0, stores)
	for _, n := range nodes {
		if isStoreNode(n) {
			stored = append(stored, n)
		} else {
			walked = append(walked, n)
		}
	}
	if !slices.IsSortedFunc(walked, byInfraDir) {
		slices.SortStableFunc(walked, byInfraDir)
	}
	for _, n := range walked {
		if _, dup := b.byDir[n.InfraDir]; dup {
			continue // the same dir reached twice (a root given twice)
		}
		resetTree(n)
		b.byDir[n.InfraDir] = n
		b.nodes = append(b.nodes, n)
	}
	return b, stored
}

// addEdges adds every candidate edge of every node: the registries', the
// declared parents', the nesting's, each of a node found on disk on the
// way (a registry target, a node dir above one not walked) in turn.
func (b *builder) addEdges() {
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
	declared := len(b.nodes)
	// Nodes not walked find the node dirs above them on disk; those found
	// so have their own parent_heartbeat and nesting in turn.
	for i := 0; i < len(b.nodes); i++ {
		n := b.nodes[i]
		if i >= declared && !n.HasScanFlag(model.FlagOutsideRoot) {
			b.declaredEdge(n)
		}
		b.nestingEdge(n, i >= read)
	}
}

// addStoreNodes takes in the nodes of the stores, keyed by their
// HeartbeatPath (a key unique across every store, package sources): their
// edges are the parents their records declare by key, strengthened as a
// parent_heartbeat is; a store has no registry and no nesting.
func (b *builder) addStoreNodes(stored []*model.Node) {
	// By key; of one key (a store given twice), the first by dir is kept.
	slices.SortStableFunc(stored, func(a, b *model.Node) int {
		if c := strings.Compare(a.HeartbeatPath, b.HeartbeatPath); c != 0 {
			return c
		}
		return byInfraDir(a, b)
	})
	b.byKey = make(map[string]*model.Node, len(stored))
	for _, n := range stored {
		if n.HeartbeatPath == "" || b.keyed(n.HeartbeatPath) != nil {
			continue // the same record reached twice (a store given twice)
		}
		id := n.ID // the store's own, prefixed by id
		resetTree(n)
		n.ID = id
		if n.InfraDir != "" && b.outsideEveryRoot(n.InfraDir) {
			// The dir a record names is where resume and merge would write
			// and run: one no root holds is never acted on (SPEC §3).
			addScanFlag(n, model.FlagOutsideRoot)
		}
		b.byKey[n.HeartbeatPath] = n
		b.nodes = append(b.nodes, n)
	}
}

// keyed is the node whose HeartbeatPath is key: a store's by its key, the
// walk's by the dir its heartbeat lies in. The walk's are not hashed by
// path as well: 10,000 of them put in byKey at each build were half of
// what a store's 1,850 nodes cost it.
func (b *builder) keyed(key string) *model.Node {
	if n := b.byKey[key]; n != nil {
		return n
	}
	if n := b.byDir[filepath.Dir(key)]; n != nil && n.HeartbeatPath == key {
		return n
	}
	return nil
}

// resetTree clears what a previous BuildForest set, keeping read flags:
// unreadable, and a store node's conflict, which its source's read sets
// (chatroom's two agents of one pid) and the tree never does (a store node
// has one candidate parent at most, the one it declares).
func resetTree(n *model.Node) {
	n.ID, n.ParentID, n.Parent, n.Children, n.Entry = "", "", nil, nil, nil
	if n.Rare == nil {
		return
	}
	var keep []model.Flag
	for _, f := range n.ScanFlags() {
		if f == model.FlagUnreadable || f == model.FlagConflict && isStoreNode(n) {
			keep = append(keep, f)
		}
	}
	if len(n.OtherParents()) > 0 || len(n.RefusedChildren()) > 0 || len(keep) != len(n.ScanFlags()) {
		n.EditRare(func(r *model.Rare) { r.OtherParents, r.RefusedChildren, r.ScanFlags = nil, nil, keep })
	}
}

// addCandidate adds parent as a candidate of child, by an edge of the
// given strength; entry is the line of parent's registry that names child
// (nil for the other edges), the last one kept.
func (b *builder) addCandidate(child, parent *model.Node, strength int, entry *model.ChildEntry) {
	if child == parent {
		addScanFlag(child, model.FlagCycle) // names itself as its parent
		return
	}
	cs := b.cands[child]
	for i, c := range cs {
		if c.parent == parent {
			cs[i].strength = max(c.strength, strength)
			cs[i].sources |= 1 << strength
			if entry != nil {
				cs[i].entry = entry
			}
			return
		}
	}
	c := candidate{parent: parent, strength: strength, sources: 1 << strength, entry: entry}
	if cs == nil {
		if len(b.firsts) == cap(b.firsts) {
			b.firsts = make([]candidate, 0, max(64, len(b.nodes)))
		}
		b.firsts = append(b.firsts, c)
		k := len(b.firsts)
		b.cands[child] = b.firsts[k-1 : k : k] // a second one moves it out
		return
	}
	b.cands[child] = append(cs, c)
}

// registryEdges adds an edge for every parseable line of p's `.children`.
func (b *builder) registryEdges(p *model.Node) {
	lines := p.RegistryLines()
	for i := range lines {
		e := lines[i].Entry
		if e == nil {
			continue
		}
		dir, file := splitNamed(e.Heartbeat, p.InfraDir)
		child := b.lookup(dir, file, true)
		if child == nil {
			continue
		}
		b.addCandidate(child, p, edgeRegistry, e) // the last line naming it wins
	}
}

// declaredEdge adds the edge the child's parent_heartbeat declares.
func (b *builder) declaredEdge(c *model.Node) {
	if c.Heartbeat == nil || c.Heartbeat.ParentHeartbeat == "" {
		return
	}
	if isStoreNode(c) {
		// A key, not a path: a parent not in any store is not invented.
		if p := b.keyed(c.Heartbeat.ParentHeartbeat); p != nil {
			b.addCandidate(c, p, edgeDeclared, nil)
		}
		return
	}
	dir, file := splitNamed(c.Heartbeat.ParentHeartbeat, c.InfraDir)
	// A parent that does not exist inside a root is not invented: only a
	// registry entry makes a missing node. One outside every root is shown.
	if p := b.lookup(dir, file, false); p != nil {
		b.addCandidate(c, p, edgeDeclared, nil)
	}
}

// nestingEdge links a node to the nearest node dir above it in its root.
// For a node the walk did not list (read because a registry entry or a
// parent_heartbeat names it), that dir is looked for on disk too: a re-read
// of one session's directory must still see that such a node lies in
// another session's. A missing node has no word of its own to check.
func (b *builder) nestingEdge(n *model.Node, notWalked bool) {
	if n.Root == "" || isStoreNode(n) {
		return
	}
	onDisk := notWalked && (n.HasHeartbeat || n.Legacy)
	parent := filepath.Dir
	if isCleanAbs(n.InfraDir) { // as the walk names them: every parent is clean
		parent = parentOfClean
	}
	for d := parent(n.InfraDir); within(n.Root, d); d = parent(d) {
		if p, ok := b.byDir[d]; ok {
			b.addCandidate(n, p, edgeNesting, nil)
			return
		}
		if onDisk && b.isNodeDirOnDisk(d) {
			if p := b.lookup(d, protocol.HeartbeatFile, false); p != nil {
				b.addCandidate(n, p, edgeNesting, nil)
				return
			}
		}
		if d == n.Root {
			return
		}
	}
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
	if isStoreNode(n) {
		if prefix == "" {
			return n.ID
		}
		return prefix + "/" + n.ID
	}
	rel, ok := relativeTo(n.Root, n.InfraDir)
	if !ok {
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

// relativeTo is filepath.Rel(root, dir), a slice of dir when dir is clean
// and below root, as the walk makes the dirs: an id is then no string of
// its own beside the infra dir.
func relativeTo(root, dir string) (string, bool) {
	if len(dir) > len(root) && dir[len(root)] == '/' && strings.HasPrefix(dir, root) && isCleanAbs(root) && isCleanAbs(dir) {
		return dir[len(root)+1:], true
	}
	rel, err := filepath.Rel(root, dir)
	return rel, err == nil
}
