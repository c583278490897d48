package scanner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §3 unreadable / §9: a node whose directory cannot be read is a
// problem, and once it can be read again the problem goes and the node is
// back — with no file event needed, since a transient error (EIO, EMFILE)
// changes nothing on disk. The error is injected: the tests run as root
// too, for which a chmod 000 directory stays readable.
func TestWatchReadErrorClearsOnRecovery(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pid, started := self(t)
			dir := filepath.Join(root, "s")
			writeHeartbeat(t, dir, pid, started, "running", "")
			var failing atomic.Bool
			wo := m.wo
			wo.FallbackPoll = 40 * time.Millisecond // failed reads are retried at the poll
			wo.readNodeDir = func(root, d string) (*model.Node, error) {
				if d == dir && failing.Load() {
					return nil, &fs.PathError{Op: "open", Path: d, Err: syscall.EIO}
				}
				return ReadNodeDir(root, d)
			}
			w := newTestWatcher(t, wo, root)
			await(t, w, "s", nodeIs("s", model.StateRunning, "", false))

			failing.Store(true)
			// A new file makes the node be read again (an event, or a
			// changed directory mtime when polled).
			if err := os.WriteFile(filepath.Join(dir, protocol.CfaFile), []byte(`{"state": "EXECUTE"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			hasReadProblem := func(s *model.Snapshot) bool {
				return slices.ContainsFunc(s.Problems, func(p model.Problem) bool { return p.Path == dir })
			}
			await(t, w, "the read error in problems", hasReadProblem)

			failing.Store(false)
			await(t, w, "recovered", func(s *model.Snapshot) bool {
				return nodeIs("s", model.StateRunning, "", false)(s) && !hasReadProblem(s)
			})
		})
	}
}
