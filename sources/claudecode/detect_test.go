package claudecode

import (
	"os"
	"path/filepath"
	"testing"
)

// Detect: a .claude dir by its own layout, a home holding one, a config
// dir of another name by sessions/ and projects/ together; never a tree
// whose jobs/ or sessions/ is another system's, opencode-teams' teams/, or
// a project's own .claude.
func TestDetect(t *testing.T) {
	tests := []struct {
		name   string
		dirs   []string // made under the temp dir
		path   string   // detected, relative to the temp dir
		want   bool
		wantAt string // the store's path, relative ("" when not detected)
	}{
		{"a .claude with sessions/", []string{".claude/sessions"}, ".claude", true, ".claude"},
		{"a .claude with teams/ alone", []string{".claude/teams"}, ".claude", true, ".claude"},
		{"a .claude with jobs/ alone", []string{".claude/jobs"}, ".claude", true, ".claude"},
		{"a home holding one", []string{"home/.claude/projects"}, "home", true, "home/.claude"},
		{"a config dir of another name: sessions/ and projects/", []string{"cfg/sessions", "cfg/projects"}, "cfg", true, "cfg"},
		{"a tree with a jobs/ of its own", []string{"tree/jobs"}, "tree", false, ""},
		{"a tree with a sessions/ of its own", []string{"tree/sessions"}, "tree", false, ""},
		{"a tree with a projects/ of its own", []string{"tree/projects"}, "tree", false, ""},
		{"opencode-teams' store: teams/", []string{"store/teams", "store/agents"}, "store", false, ""},
		{"a project's own .claude", []string{"proj/.claude/commands", "proj/.claude/agents"}, "proj", false, ""},
		{"an empty .claude", []string{".claude"}, ".claude", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, tt.path)
			if got := (Source{}).Detect(path); got != tt.want {
				t.Errorf("Detect(%s) = %v, want %v", tt.path, got, tt.want)
			}
			if store, ok := storeDir(path); ok && store != filepath.Join(dir, tt.wantAt) {
				t.Errorf("store %s, want %s", store, filepath.Join(dir, tt.wantAt))
			}
		})
	}
}
