package scanner

import (
	"path/filepath"

	"github.com/dispatchtop/dispatchtop/model"
)

// A path named twice is held as one string (SPEC §8's memory budget): the
// walk makes a registered child's path with its registry entry's string,
// and a parent_heartbeat is its parent's path (pathsNamed,
// dirJob.above). What the watcher reads again keeps to that here: over a
// long watch every node is read again, and each copy was about 100 bytes
// a path, 16 MB at 100,000 nodes.

// heldPath is path as the HeartbeatPath of the node held at its directory
// when that one is equal, else path itself.
func (w *Watcher) heldPath(path string) string {
	if ln := w.nodes.byDir[filepath.Dir(path)]; ln != nil && ln.n != nil && ln.n.HeartbeatPath == path {
		return ln.n.HeartbeatPath
	}
	return path
}

// sharePaths gives a node just read, before the watcher holds it, the
// strings its paths have already: its own heartbeat path the one it had,
// its parent_heartbeat its parent's path.
func (w *Watcher) sharePaths(n *model.Node) {
	if n.HeartbeatPath != "" {
		n.HeartbeatPath = w.heldPath(n.HeartbeatPath)
	}
	if hb := n.Heartbeat; hb != nil && hb.ParentHeartbeat != "" {
		hb.ParentHeartbeat = w.heldPath(hb.ParentHeartbeat)
	}
	w.shareEntryPaths(n.RegistryLines())
}

// shareEntryPaths gives registry lines just read their children's paths.
func (w *Watcher) shareEntryPaths(lines []model.RegistryLine) {
	for _, line := range lines {
		if e := line.Entry; e != nil && e.Heartbeat != "" {
			e.Heartbeat = w.heldPath(e.Heartbeat)
		}
	}
}
