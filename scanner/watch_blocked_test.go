package scanner

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// SPEC §1/§3: a `.middle/blocked.json` that appears while watching makes the
// node blocked, which suppresses kill_candidate — whether `.middle` was
// there before or arrives with the sentinel already inside (renamed into
// place, so it holds the file before any watch on it can exist). When it
// goes, so does the flag.
func TestWatchMiddleBlockedAppears(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, infra string)
		block   func(t *testing.T, infra string)
	}{
		{
			name: ".middle there before",
			prepare: func(t *testing.T, infra string) {
				if err := os.Mkdir(filepath.Join(infra, protocol.MiddleDir), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			block: func(t *testing.T, infra string) {
				writeBlocked(t, filepath.Join(infra, protocol.MiddleDir))
			},
		},
		{
			name: ".middle arrives with the sentinel in it",
			block: func(t *testing.T, infra string) {
				staged := filepath.Join(t.TempDir(), protocol.MiddleDir)
				if err := os.Mkdir(staged, 0o755); err != nil {
					t.Fatal(err)
				}
				writeBlocked(t, staged)
				if err := os.Rename(staged, filepath.Join(infra, protocol.MiddleDir)); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		for _, m := range watchModes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				root := t.TempDir()
				// Not this test process: kill never signals it or its
				// ancestors, so a record of it is never a kill candidate.
				cmd, started := startSleep(t)
				pid := cmd.Process.Pid
				infra := filepath.Join(root, "s")
				hb := writeHeartbeat(t, infra, pid, started, "running", "")
				setMtime(t, hb, time.Now().Add(-time.Minute)) // alive, long past kill-after
				if tt.prepare != nil {
					tt.prepare(t, infra)
				}
				w := newTestWatcher(t, m.wo, root)
				await(t, w, "kill candidate", nodeIs("s", model.StateRunning, model.FlagKillCandidate, true))
				tt.block(t, infra)
				await(t, w, "blocked, no kill candidate", func(s *model.Snapshot) bool {
					n := s.Node("s")
					return n != nil && n.HasFlag(model.FlagBlocked) && !n.HasFlag(model.FlagKillCandidate) &&
						n.Action == model.ActionAnswer
				})
				// `.middle` moved away whole: nobody is waiting any more.
				if err := os.Rename(filepath.Join(infra, protocol.MiddleDir), filepath.Join(t.TempDir(), protocol.MiddleDir)); err != nil {
					t.Fatal(err)
				}
				await(t, w, "unblocked", nodeIs("s", model.StateRunning, model.FlagKillCandidate, true))
			})
		}
	}
}

func writeBlocked(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, protocol.BlockedFile), []byte(`{"question": "merge or rebase?"}`), 0o644); err != nil {
		t.Fatal(err)
	}
}
