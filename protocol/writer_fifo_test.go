//go:build unix

package protocol

import (
	"path/filepath"
	"strings"
	"testing"
)

// SPEC §9: the writers open the files of the contract as the readers do. A
// FIFO planted as the parent's registry, or as the heartbeat an agent
// updates, is refused with a line naming it, at once: a plain open would
// wait for a writer that never comes, and the dispatch would never start.
func TestTheWritersRefuseAFIFOWithoutWaiting(t *testing.T) {
	tests := []struct {
		name  string
		plant string // the file planted as a FIFO
		write func(dir string) error
	}{
		{name: "registration: the parent's .children", plant: RegistryFile, write: func(dir string) error {
			_, err := Register(filepath.Join(dir, HeartbeatFile), Registration{Heartbeat: filepath.Join(dir, "kid", HeartbeatFile)})
			return err
		}},
		{name: "a status change: the heartbeat", plant: HeartbeatFile, write: func(dir string) error {
			return SetHeartbeatStatus(filepath.Join(dir, HeartbeatFile), "paused")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.plant)
			fifo(t, path)
			err := within(t, path, func() error { return tt.write(dir) })
			if err == nil || !strings.Contains(err.Error(), "not a regular file (named pipe)") || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want a refusal naming %s as a named pipe", err, path)
			}
		})
	}
}
