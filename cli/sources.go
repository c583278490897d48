package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/chatroom"
	"github.com/dispatchtop/dispatchtop/sources/claudecode"
	"github.com/dispatchtop/dispatchtop/sources/codex"
	"github.com/dispatchtop/dispatchtop/sources/middle"
	"github.com/dispatchtop/dispatchtop/sources/opencode"
	"github.com/dispatchtop/dispatchtop/sources/opencodeteams"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// knownSources are the sources every command that reads the forest
// registers besides the native one (SPEC §10), in the order a root's store
// is detected. Claude Code's store comes before opencode-teams': its
// teams/ is a layout they share, and only its own sessions/, jobs/ or
// projects/ (or the dir's name, .claude) make a store Claude Code's.
func knownSources() []sources.Source {
	return []sources.Source{teaparty.New(), middle.New(), claudecode.Source{}, opencodeteams.Source{}, chatroom.Source{},
		codex.New(), opencode.New(),
	}
}

// readingSources are knownSources as the roots are read by them: the
// opencode-teams agents' sessions are looked up in the database of the
// OpenCode root among roots (see opencodeDB), not at OpenCode's default
// place.
func readingSources(roots []string) []sources.Source {
	srcs := knownSources()
	db := opencodeDB(roots)
	if db == "" {
		return srcs
	}
	for i, s := range srcs {
		if _, ok := s.(opencodeteams.Source); ok {
			srcs[i] = opencodeteams.Source{Lookup: &opencodeteams.Lookup{OpencodeDB: db}}
		}
	}
	return srcs
}

// opencodeDB is the database the first OpenCode root among roots reads
// (`opencode:PATH`, or a path read as OpenCode's data directory or
// database), "" when none does.
func opencodeDB(roots []string) string {
	for _, r := range roots {
		kind, p := splitRoot(r)
		if kind == opencode.Kind {
			return opencode.DBPath(p)
		}
		if _, ok := detected(p).(*opencode.Source); kind == "" && ok {
			return opencode.DBPath(p)
		}
	}
	return ""
}

// defaultRoots are the roots read when none is given (SPEC §1): the native
// defaults under cwd, then each store of another system that exists where
// that system keeps it — opencode-teams' of the project cwd is in (or
// $OPENCODE_TEAMS_DIR), ~/.middle and ~/.chatroom, Claude Code's ~/.claude
// (or $CLAUDE_CONFIG_DIR), Codex CLI's $CODEX_HOME (or ~/.codex), OpenCode's
// $XDG_DATA_HOME/opencode. A store a native default is already read as is
// not added twice.
func defaultRoots(cwd, home string, getenv func(string) string) []string {
	var roots []string
	// Today's defaults stay read by the file protocol, as they always were.
	// A source that detects its store there and walks it natively too
	// (TeaParty's `.teaparty/jobs`) reads it beside the file protocol;
	// any other would read it instead, so the root is named native.
	for _, r := range scanner.DefaultRoots(cwd) {
		if src := detected(r); src != nil && !sources.HoldsNativeTree(src, r) {
			r = string(sources.Native) + ":" + r
		}
		roots = append(roots, r)
	}
	type store struct {
		src  sources.Source
		path string
	}
	stores := []store{{src: opencodeteams.Source{}, path: opencodeteams.DefaultStore(getenv, cwd)}}
	if home != "" {
		stores = append(stores,
			store{src: middle.New(), path: filepath.Join(home, ".middle")},
			store{src: chatroom.Source{}, path: chatroom.DefaultStore(home)})
	}
	if dir := claudecode.DefaultStore(getenv, home); dir != "" {
		stores = append(stores, store{src: claudecode.Source{}, path: dir})
	}
	// Codex CLI's home: $CODEX_HOME, else ~/.codex.
	if p := codex.DefaultStore(getenv, home); p != "" {
		stores = append(stores, store{src: codex.New(), path: p})
	}
	// OpenCode's data directory: $XDG_DATA_HOME/opencode, else
	// ~/.local/share/opencode.
	if p := opencode.DefaultStore(getenv, home); p != "" {
		stores = append(stores, store{src: opencode.New(), path: p})
	}
	for _, s := range stores {
		if !s.src.Detect(s.path) {
			continue
		}
		roots = append(roots, string(s.src.Kind())+":"+s.path)
	}
	return roots
}

// detected is the source that would read path as its store, nil for none.
func detected(path string) sources.Source {
	for _, s := range knownSources() {
		if s.Detect(path) {
			return s
		}
	}
	return nil
}

// rootPath is the path a ROOT names: a `KIND:PATH` root's PATH when the
// root as written is no path and KIND is a known source (SPEC §10).
func rootPath(root string) string {
	_, path := splitRoot(root)
	return path
}

// splitRoot is the KIND a `KIND:PATH` root names and its PATH; a root
// that is a path as written, or whose KIND no source has, is that path
// with no kind.
func splitRoot(root string) (sources.Kind, string) {
	if _, err := os.Lstat(root); err == nil {
		return "", root
	}
	kind, path, ok := strings.Cut(root, ":")
	if !ok || path == "" {
		return "", root
	}
	if kind == string(sources.Native) {
		return sources.Native, path
	}
	for _, s := range knownSources() {
		if string(s.Kind()) == kind {
			return s.Kind(), path
		}
	}
	return "", root
}

// rootPaths are the paths roots name: a `KIND:PATH` root holds a config
// as much as PATH would.
func rootPaths(roots []string) []string {
	paths := make([]string, len(roots))
	for i, r := range roots {
		paths[i] = rootPath(r)
	}
	return paths
}

// homeDir is the user's home, "" when it cannot be told.
func homeDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return home
}

// completeRootKinds offers the KIND: prefixes a ROOT may carry, each with
// what it reads; once a prefix is typed (or a path begun), the shell
// completes paths as usual.
func completeRootKinds(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if strings.ContainsAny(toComplete, ":/.~") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	out := []cobra.Completion{cobra.CompletionWithDesc(string(sources.Native)+":", "the heartbeat file protocol")}
	for _, src := range knownSources() {
		out = append(out, cobra.CompletionWithDesc(string(src.Kind())+":", "a store of "+string(src.Kind())))
	}
	return out, cobra.ShellCompDirectiveNoSpace
}
