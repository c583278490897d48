package cli

import (
	"path/filepath"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
)

// SPEC §1, §10: with no ROOT, Codex CLI's home is read where it exists:
// $CODEX_HOME, else ~/.codex; a plain path to it is detected as codex, and
// codex:PATH names it.
func TestDefaultRootsAddCodexHome(t *testing.T) {
	home, _ := storeHome(t)
	dotCodex := filepath.Join(home, ".codex")
	if got := rootSources(t); got[dotCodex] != "" {
		t.Errorf("without ~/.codex: roots = %v", got)
	}
	storefixtures.NewDB(t, filepath.Join(dotCodex, "state_5.sqlite"), storefixtures.CodexStateDDL)
	if got := rootSources(t); got[dotCodex] != "codex" {
		t.Errorf("with ~/.codex: roots = %v, want %s read as codex", got, dotCodex)
	}

	moved := filepath.Join(t.TempDir(), "codex-home")
	storefixtures.NewDB(t, filepath.Join(moved, "state_5.sqlite"), storefixtures.CodexStateDDL)
	t.Setenv("CODEX_HOME", moved)
	got := rootSources(t)
	if got[moved] != "codex" || got[dotCodex] != "" {
		t.Errorf("with $CODEX_HOME: roots = %v, want %s read as codex and not ~/.codex", got, moved)
	}

	for _, root := range []string{moved, "codex:" + moved} {
		if got := rootSources(t, root); len(got) != 1 || got[moved] != "codex" {
			t.Errorf("%s read as %v", root, got)
		}
	}
}

// SPEC §1, §10: with no ROOT, OpenCode's data directory is read where its
// database exists: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode;
// a plain path to it is detected as opencode, and opencode:PATH names it.
func TestDefaultRootsAddOpencodeData(t *testing.T) {
	home, _ := storeHome(t)
	data := filepath.Join(home, ".local", "share", "opencode")
	if got := rootSources(t); got[data] != "" {
		t.Errorf("without %s: roots = %v", data, got)
	}
	storefixtures.NewDB(t, filepath.Join(data, "opencode.db"), storefixtures.OpencodeDDL)
	if got := rootSources(t); got[data] != "opencode" {
		t.Errorf("with %s: roots = %v, want it read as opencode", data, got)
	}
	xdg := t.TempDir()
	moved := filepath.Join(xdg, "opencode")
	storefixtures.NewDB(t, filepath.Join(moved, "opencode.db"), storefixtures.OpencodeDDL)
	t.Setenv("XDG_DATA_HOME", xdg)
	if got := rootSources(t); got[moved] != "opencode" || got[data] != "" {
		t.Errorf("with $XDG_DATA_HOME: roots = %v", got)
	}
	for _, root := range []string{moved, "opencode:" + moved} {
		if got := rootSources(t, root); len(got) != 1 || got[moved] != "opencode" {
			t.Errorf("%s read as %v", root, got)
		}
	}
}
