// Package claudecode reads the state Claude Code keeps under ~/.claude
// (or $CLAUDE_CONFIG_DIR): one sessions/<pid>.json per running `claude`
// process, its teams (teams/<team>/config.json and their inboxes), its
// background jobs (jobs/<id>/state.json) and its subagents' transcripts
// (projects/<slug>/<sessionId>/subagents/). It yields node facts (see
// package sources): each running session is a session; a team's members,
// a session's jobs and its subagents hang under the session that leads or
// owns them.
//
// Claude Code is closed source: the formats are those public third-party
// readers observed (docs/sources.md, ## Claude Code, names each with its
// version). Drift is expected, so a record that says what this reader
// does not know (a status, a missing field) is a problem naming the file
// and the field, and its node is flagged unknown_status, never guessed
// dead: a session is dead only when its pid is gone, or now another
// process's (checked against procStart).
//
// A clean exit removes a session's file; a hard kill leaves it behind,
// reading idle: the crash this source is here to catch.
package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
)

// Kind is the source's KIND: `claude:PATH`.
const Kind = sources.ClaudeCode

// Store layout.
const (
	sessionsDir = "sessions"
	teamsDir    = "teams"
	jobsDir     = "jobs"
	projectsDir = "projects"
	teamConfig  = "config.json"
	jobState    = "state.json"
)

// StartedAtSlack is how long after its process was created a session may
// stamp startedAt, used only when a file has no procStart: startedAt −
// procStart was measured at 1–9 s, with an outlier of 181 s under load.
const StartedAtSlack = 5 * time.Minute

// Source reads a Claude Code store.
type Source struct {
	// BootTime is the host's boot time, to turn Linux start ticks into a
	// time (nil: /proc/stat's btime).
	BootTime func() time.Time
	// SocketDir holds the sockets of the tmux servers asked for a tmux
	// member's pane ("": tmux's own, $TMUX_TMPDIR or /tmp, then tmux-<uid>).
	SocketDir string
}

var _ sources.Source = Source{}

// sep joins a directory the reader made clean (filepath.Join of the
// store's) and a name its listing gave (one entry: no separator, not . or
// ..) into the path filepath.Join would make, without Join's Clean over
// the whole path: that Clean, a record's, was a fourteenth of reading a
// home's 700 records.
const sep = string(filepath.Separator)

// Kind is claude.
func (Source) Kind() sources.Kind { return Kind }

// DefaultStore is where Claude Code keeps its state: $CLAUDE_CONFIG_DIR,
// else ~/.claude under home ("" when neither is known).
func DefaultStore(getenv func(string) string, home string) string {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return dir
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// storeDir resolves path to the store: path itself, else the .claude dir
// under it (a home). A dir named .claude is the store when it holds one of
// sessions/, jobs/, projects/, teams/; a dir of another name (a
// $CLAUDE_CONFIG_DIR) only when it holds both sessions/ and projects/,
// which Claude Code makes in every store it runs in: a tree of another
// system's with a jobs/ or sessions/ of its own stays that system's, and
// teams/ alone is opencode-teams' layout. A project's own .claude
// (settings, commands) holds none of them.
func storeDir(path string) (string, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	for _, dir := range []string{path, filepath.Join(path, ".claude")} {
		if filepath.Base(dir) != ".claude" {
			if isDir(filepath.Join(dir, sessionsDir)) && isDir(filepath.Join(dir, projectsDir)) {
				return dir, true
			}
			continue
		}
		for _, sub := range []string{sessionsDir, jobsDir, projectsDir, teamsDir} {
			if isDir(filepath.Join(dir, sub)) {
				return dir, true
			}
		}
	}
	return path, false
}

// Detect reports whether path is a Claude Code store or a home holding one.
func (Source) Detect(path string) bool {
	_, ok := storeDir(path)
	return ok
}

// WatchPaths are the store, sessions/, teams/ and each team's dir, jobs/
// and each job's dir: every record is written whole in those dirs.
func (Source) WatchPaths(path string) []string {
	store, ok := storeDir(path)
	if !ok {
		return nil
	}
	paths := []string{store}
	for _, sub := range []string{sessionsDir, teamsDir, jobsDir} {
		dir := filepath.Join(store, sub)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			paths = append(paths, dir)
			if sub != sessionsDir {
				paths = append(paths, subdirs(dir)...)
			}
		}
	}
	return paths
}

func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// Thresholds: Claude Code counts no age. A session rewrites its file when
// its status changes, and an idle one may sit for days: its records carry
// BeatNotRequired, so only the pid (or the record's own word) says it
// stopped. These judge nothing but a record with no pid.
func (Source) Thresholds() model.Thresholds {
	th := model.DefaultThresholds()
	th.Beat, th.Stale, th.KillAfter = 5*time.Minute, 30*time.Minute, 30*time.Minute
	return th
}

// Read reads the store at path as of now.
func (s Source) Read(path string, now time.Time) sources.Facts {
	var facts sources.Facts
	store, _ := storeDir(path)
	boot := s.BootTime
	if boot == nil {
		boot = bootTime
	}
	root := path
	if abs, err := filepath.Abs(path); err == nil {
		root = abs
	}
	r := reader{store: store, root: root, facts: &facts, boot: boot(), goos: runtime.GOOS, socketDir: s.SocketDir,
		bySession: map[string]*model.Node{}, memberIDs: map[string]bool{}}
	r.readSessions()
	r.supersede()
	r.readJobs()
	r.readTeams()
	r.readSubagents()
	sort.Slice(facts.Nodes, func(i, j int) bool { return facts.Nodes[i].ID < facts.Nodes[j].ID })
	sort.SliceStable(facts.Problems, func(i, j int) bool { return facts.Problems[i].Path < facts.Problems[j].Path })
	return facts
}

type reader struct {
	store     string
	root      string // the root as given, whose journal dir holds dispatchtop's own files
	facts     *sources.Facts
	boot      time.Time
	goos      string
	socketDir string
	bySession map[string]*model.Node // sessionId → its session's node
	sessions  []*model.Node          // every session's node, as read
	memberIDs map[string]bool        // the ids members were given
}

func (r *reader) problem(path, format string, a ...any) {
	r.facts.Problems = append(r.facts.Problems, model.Problem{Path: path, Error: fmt.Sprintf(format, a...)})
}

// listDir lists dir, a problem when it exists and cannot be listed.
func (r *reader) listDir(dir string) []os.DirEntry {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.problem(dir, "%v", err)
	}
	return entries
}

// readJSON reads a record whole into v with encoding/json (readRecord
// decodes field by field), a problem naming the file when it cannot be
// read or parsed; fs.ErrNotExist (removed since listed) is no problem.
func (r *reader) readJSON(path string, v any) ([]byte, protocol.Info, bool) {
	return r.readDecoded(path, func(b []byte) error { return json.Unmarshal(b, v) })
}

// readDecoded reads the file at path and its info, then decodes it: the
// file missing (removed since listed) is no problem; unreadable, or not
// decoded, is one naming the file. The info is the open descriptor's, of
// the very file read: no second look at the path, which a rename between
// the two could have pointed at another file.
func (r *reader) readDecoded(path string, decode func([]byte) error) ([]byte, protocol.Info, bool) {
	return r.readDecodedAt(noDir, path, path, decode)
}

// readDecodedAt is readDecoded of the record name of the directory d held
// open, whose path is path.
func (r *reader) readDecodedAt(d recordDir, name, path string, decode func([]byte) error) ([]byte, protocol.Info, bool) {
	b, info, err := readWholeAt(d, name, path, protocol.MaxDocumentSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, info, false
	}
	if err != nil {
		r.problem(path, "%v", err)
		return nil, info, false
	}
	if err := decode(b); err != nil {
		r.problem(path, "read %s: %v", path, err)
		return nil, info, false
	}
	return b, info, true
}

// readWhole reads the file at path, up to limit bytes, opened as
// protocol.OpenReader opens it (a FIFO or a device is refused), and its
// size and mtime as the open descriptor gives them. The buffer is the size
// the descriptor gave, one byte over, so that a file not grown since is
// read in one read: a read that gives exactly that size, short of the byte
// over it asked for, met the file's end, and no second read is made only
// to be told so (a thousand records, a thousand reads fewer). A file grown
// in place fills the byte over and is still read whole; one read short of
// its size (a file system that gives less than asked) is read on to EOF.
func readWhole(path string, limit int64) ([]byte, protocol.Info, error) {
	return readWholeAt(noDir, path, path, limit)
}

// readWholeAt is readWhole of the record name of the directory d held
// open, whose path is path.
func readWholeAt(d recordDir, name, path string, limit int64) ([]byte, protocol.Info, error) {
	f, info, err := openRecord(d, name, path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	b := make([]byte, 0, min(info.Size, limit)+1)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 512)
		}
		asked := cap(b) - len(b)
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, info, fmt.Errorf("read %s: %w: over %d bytes", path, protocol.ErrTooLarge, limit)
		}
		if err == io.EOF || (err == nil && n > 0 && n < asked && int64(len(b)) == info.Size) {
			return b, info, nil
		}
		if err != nil {
			return nil, info, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// millis reads an epoch-milliseconds field (0 or absent: zero).
func millis(ms *float64) time.Time {
	if ms == nil || *ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(*ms))
}

// isoTime reads an ISO 8601 field (absent or unparseable: zero).
func isoTime(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func newer(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// appendFields appends source fields to dst, leaving out the empty ones;
// dst has room for them all.
func appendFields(dst []model.Field, kv ...string) []model.Field {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			dst = append(dst, model.Field{Name: kv[i], Value: kv[i+1]})
		}
	}
	if len(dst) == 0 {
		return nil
	}
	return slices.Clip(dst)
}

// fields builds source fields, leaving out the empty ones.
func fields(kv ...string) []model.Field {
	n := 0
	for i := 1; i < len(kv); i += 2 {
		if kv[i] != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]model.Field, 0, n) // one allocation, not one at each doubling
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out = append(out, model.Field{Name: kv[i], Value: kv[i+1]})
		}
	}
	return out
}

func quoted(s string) string { return strconv.Quote(s) }
