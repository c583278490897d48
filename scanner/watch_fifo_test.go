package scanner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// releaseFIFOAtCleanup opens fifo read-write (which never blocks and
// releases an opener blocked at either end) until it is gone, starting when
// the test ends: a watcher hung on it then returns, and the hang fails the
// test instead of the whole binary. Called after the watcher is built, its
// cleanup runs before the watcher's.
func releaseFIFOAtCleanup(t *testing.T, fifo string) {
	t.Cleanup(func() {
		go func() {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0)
				if err != nil {
					return // removed with the test's directory
				}
				f.Close()
			}
		}()
	})
}

// SPEC §9: a FIFO planted in place of a file the live watcher follows
// neither blocks nor freezes it: the watcher reports it as a problem of its
// node and keeps following the others — a beat elsewhere shows, and a new
// session appears.
func TestWatchAPlantedFIFOIsAProblemNotAHang(t *testing.T) {
	files := []string{protocol.RegistryFile, protocol.CfaFile, protocol.HeartbeatFile}
	for _, m := range watchModes {
		for _, name := range files {
			t.Run(m.name+"/"+name, func(t *testing.T) {
				root := t.TempDir()
				pid, started := self(t)
				s1 := filepath.Join(root, "s1")
				hb1 := writeHeartbeat(t, s1, pid, started, "running", "")
				writeHeartbeat(t, filepath.Join(root, "s1", "w"), pid, started, "running", hb1)
				appendLine(t, filepath.Join(s1, protocol.RegistryFile), map[string]any{"heartbeat": filepath.Join(s1, "w", protocol.HeartbeatFile), "team": "t", "task_id": nil, "status": "active"})
				os.WriteFile(filepath.Join(s1, protocol.CfaFile), []byte(`{"state": "EXECUTE"}`), 0o644)
				hb2 := writeHeartbeat(t, filepath.Join(root, "s2"), pid, started, "running", "")
				w := newTestWatcher(t, m.wo, root)
				await(t, w, "s1 and s2 running", func(s *model.Snapshot) bool {
					return nodeIs("s1", model.StateRunning, "", false)(s) && nodeIs("s2", model.StateRunning, "", false)(s)
				})

				// Planted the way a writer replaces a file: made aside, renamed over.
				planted := filepath.Join(s1, name)
				aside := planted + ".planted"
				if err := syscall.Mkfifo(aside, 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				if err := os.Rename(aside, planted); err != nil {
					t.Fatal(err)
				}
				releaseFIFOAtCleanup(t, planted)
				await(t, w, "the FIFO reported as a problem", func(s *model.Snapshot) bool {
					return hasProblem(s.Problems, planted, "not a regular file")
				})

				beat := time.Now().Add(-time.Second).Truncate(time.Second)
				setMtime(t, hb2, beat)
				writeHeartbeat(t, filepath.Join(root, "s3"), pid, started, "running", "")
				await(t, w, "s2's beat and the new session s3", func(s *model.Snapshot) bool {
					n := s.Node("s2")
					return n != nil && n.BeatMtime.Equal(beat) && s.Node("s3") != nil
				})
			})
		}
	}
}
