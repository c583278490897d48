package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Header: roots, counts as glyph-number-word, watch mode and why,
// the NFS/SMB warning, the --no-pid-check note, the clock.
func TestHeader(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(s *model.Snapshot)
		opts  Options
		wants []string
	}{
		{name: "counts and clock", wants: []string{"/srv/fleet/.sessions", "12:00:00", "● 5 running", "✖ 3 dead", "✔ 1 finished", "○ 1 missing", "◆ 1 kill_candidate", "⧗ 1 blocked", "watch: fsnotify"}},
		{name: "polling and why", edit: func(s *model.Snapshot) {
			s.Watch = model.WatchInfo{Mode: "polling", Interval: 2 * time.Second, Reason: "inotify watch limit reached"}
		}, wants: []string{"watch: polling every 2s (inotify watch limit reached)"}},
		{name: "NFS warning", edit: func(s *model.Snapshot) {
			s.Watch.Warnings = []string{"/srv/fleet is on nfs: mtime liveness unreliable"}
		}, wants: []string{"⚠ /srv/fleet is on nfs: mtime liveness unreliable"}},
		{name: "no pid check", edit: func(s *model.Snapshot) { s.Thresholds.NoPidCheck = true },
			wants: []string{"--no-pid-check: liveness from mtimes alone"}},
		{name: "overflows", edit: func(s *model.Snapshot) { s.Watch.Overflows = 2 },
			wants: []string{"2 event overflows re-stated"}},
		{name: "readonly and notes", opts: Options{Readonly: true, Notes: []string{"unknown theme \"neon\""}},
			wants: []string{"read-only", `unknown theme "neon"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := exampleSnapshot()
			if tt.edit != nil {
				tt.edit(snap)
			}
			opts := tt.opts
			opts.Initial = snap
			m := newTestModel(t, 160, 30, opts)
			header := strings.Join(strings.Split(stripped(m), "\n")[:m.headerH], "\n")
			for _, w := range tt.wants {
				if !strings.Contains(header, w) {
					t.Errorf("header lacks %q:\n%s", w, header)
				}
			}
		})
	}
}
