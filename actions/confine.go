package actions

import (
	"fmt"
	"path/filepath"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// confined says why the node's dir may not be written to or run in, or ""
// when it may: resume and merge write their markers and logs there and run
// their command in it, compaction rewrites its registry. A store supplies
// that dir (a middle row's worktree_path, a TeaParty session dir), and it
// may be anywhere: it must lie inside one of the action's roots once its
// symlinks are resolved (SPEC §5, §9), or the action, its dry run too, is
// refused naming it.
func (e *Engine) confined(n *model.Node) string {
	if n.InfraDir == "" {
		return ""
	}
	if !filepath.IsAbs(n.InfraDir) {
		return fmt.Sprintf("node %s: its %s record names the dir %q, not an absolute path: never acted on", n.ID, sourceName(n), n.InfraDir)
	}
	real, err := resolveDir(n)
	if err != nil {
		return fmt.Sprintf("node %s: its dir %s cannot be resolved (%v): never acted on", n.ID, n.InfraDir, err)
	}
	for _, area := range e.rootAreas(n) {
		if within(area, real) {
			return ""
		}
	}
	where := n.InfraDir
	if real != n.InfraDir {
		where += " (resolved " + real + ")"
	}
	return fmt.Sprintf("node %s: its dir %s lies outside every root: never acted on", n.ID, where)
}

// rootAreas are the directories the action's roots hold, symlinks
// resolved: the configured roots as a scan prepares them (a `KIND:PATH`
// root at PATH, a database root's directory) and the node's own root (a
// NODE outside every root given acts in the directory of its session).
func (e *Engine) rootAreas(n *model.Node) []string {
	var roots []scanner.Root
	if len(e.opts.Scan.Roots) > 0 {
		roots, _, _ = scanner.PrepareRoots(e.opts.Scan.Roots, e.opts.Scan.Sources...)
	}
	if n.Root != "" {
		if real, err := filepath.EvalSymlinks(n.Root); err == nil {
			roots = append(roots, scanner.Root{Path: n.Root, Resolved: real})
		}
	}
	return scanner.RootAreas(roots)
}
