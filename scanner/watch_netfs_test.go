package scanner

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §1/§6: a network file system mounted below a root (not only a root
// on one) is polled, and the header warns about it; also one that appears
// while watching. The mounts are simulated through the two questions the
// watcher asks the system: a directory's device, and the file system a
// path is on — asked only of the roots and of mount points.
func TestWatchNetworkMountBelowRoot(t *testing.T) {
	root := t.TempDir()
	pid, started := self(t)
	writeHeartbeat(t, filepath.Join(root, "s"), pid, started, "running", "")
	mnt, later := filepath.Join(root, "s", "mnt"), filepath.Join(root, "s2", "mnt")
	hb := writeHeartbeat(t, filepath.Join(mnt, "w"), pid, started, "running", "")
	setMtime(t, hb, time.Now().Add(-500*time.Millisecond))
	var mu sync.Mutex
	var asked []string
	wo := WatchOptions{Tick: 50 * time.Millisecond, FallbackPoll: 40 * time.Millisecond,
		netFS: func(p string) string {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, p)
			switch p {
			case mnt:
				return "NFS"
			case later:
				return "SMB"
			}
			return ""
		},
		devOf: func(p string) uint64 {
			if within(mnt, p) || within(later, p) {
				return 2
			}
			return 1
		}}
	w := newTestWatcher(t, wo, root)
	info := w.Snapshot().Watch
	if info.Mode != ModeMixed || !strings.Contains(info.Reason, "network file system") ||
		len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], mnt+" is on NFS") {
		t.Fatalf("watch info %+v, want mixed, the mount polled for a network file system and warned about", info)
	}
	setMtime(t, hb, time.Now())
	await(t, w, "beat in the mount seen by polling", nodeIs("s/mnt/w", model.StateRunning, model.FlagQuiet, false))

	writeHeartbeat(t, filepath.Join(later, "w"), pid, started, "running", "")
	writeHeartbeat(t, filepath.Join(root, "s2"), pid, started, "running", "")
	await(t, w, "a mount made later, warned about", func(s *model.Snapshot) bool {
		return s.Node("s2/mnt/w") != nil && slices.ContainsFunc(s.Watch.Warnings, func(x string) bool {
			return strings.Contains(x, later+" is on SMB")
		})
	})
	for _, p := range w.fsw.WatchList() {
		if within(mnt, p) || within(later, p) {
			t.Errorf("%s is watched; on a network file system it must be polled", p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(asked)
	if want := []string{root, mnt, later}; !slices.Equal(slices.Compact(asked), want) {
		t.Errorf("file system asked for %v, want only the root and the mount points %v", asked, want)
	}
}
