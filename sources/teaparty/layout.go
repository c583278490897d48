package teaparty

// Where a root's stores are (a TeaParty home, a jobs dir), its buses, and the
// files beside them a node reads: a job's CfA and streams, a worker's phase.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
)

// layout is where a root's stores are: home is the TeaParty home ("" when
// the root is a jobs dir outside one), jobs the dir of the jobs.
type layout struct {
	root, home, jobs string
	// What every row of a read looks up in the home, looked at once per
	// read (see homeState), not once per row.
	pausedBy string   // the home's paused marker, when it is there
	scopes   []string // the home's dirs, where the chat tier keeps its sessions
	// sessions are the session dirs of the scopes, by session id: the
	// first scope's that lists it as a directory (or a link). Listed once
	// a read: a worker's dir was looked for by two stats a scope, a row.
	sessions map[string]string
	// homeStamps are the dirs listed for the above (the home, which holds
	// the paused marker too, and each scope's sessions dir), as they were
	// before they were listed (see homeState).
	homeStamps []dirStamp
	// lists counts the dirs listed (nil: not counted).
	lists *atomic.Int64
}

// homeState is l with what the home holds for every row: whether the
// project is paused, and the dirs that may hold a session. last is the
// last read's (nil: none): while the dirs it listed are as they were, its
// state is kept, not listed again.
func (l layout) homeState(last *layout) layout {
	if l.home == "" {
		return l
	}
	if last != nil && last.home == l.home && last.homeStamps != nil && allStill(last.homeStamps) {
		l.pausedBy, l.scopes, l.sessions, l.homeStamps = last.pausedBy, last.scopes, last.sessions, last.homeStamps
		return l
	}
	at := time.Now()
	l.homeStamps = []dirStamp{stampDir(l.home, at)}
	if marker := filepath.Join(l.home, pausedFile); exists(marker) {
		l.pausedBy = marker
	}
	l.scopes = l.subdirs(l.home)
	l.sessions = map[string]string{}
	for _, scope := range l.scopes {
		dir := filepath.Join(l.home, scope, sessionsDir)
		l.homeStamps = append(l.homeStamps, stampDir(dir, at))
		entries, _ := l.readDir(dir)
		for _, e := range entries {
			if _, seen := l.sessions[e.Name()]; !seen && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
				l.sessions[e.Name()] = filepath.Join(dir, e.Name())
			}
		}
	}
	return l
}

// locate finds the layout a root names: a `.teaparty` dir, a TeaParty home
// holding `management/`, or a jobs dir (`.teaparty/jobs`, or a dir whose
// `job-*` dirs hold a bus).
func locate(root string) (layout, bool) {
	abs, err := filepath.Abs(root)
	if err != nil || !isDir(abs) {
		return layout{}, false
	}
	if filepath.Base(abs) == homeDir || isDir(filepath.Join(abs, managementDir)) {
		return layout{root: abs, home: abs, jobs: filepath.Join(abs, jobsDir)}, true
	}
	if filepath.Base(abs) == jobsDir && filepath.Base(filepath.Dir(abs)) == homeDir {
		return layout{root: abs, home: filepath.Dir(abs), jobs: abs}, true
	}
	if len(layout{}.jobBuses(abs)) > 0 {
		return layout{root: abs, jobs: abs}, true
	}
	return layout{}, false
}

// bus is one database holding conversations; job is its job dir ("" for
// a management bus); idDir what its rows' ids begin with (see storeDir).
type bus struct {
	path, job string
	idDir     string
}

// buses lists the databases of the layout: every job's, the management
// bus, and the chat tier's agent buses, in a stable order.
func (l layout) buses() []bus {
	var out []bus
	for _, p := range l.jobBuses(l.jobs) {
		out = append(out, bus{path: p, job: filepath.Dir(p), idDir: storeDir(l, p)})
	}
	if l.home == "" {
		return out
	}
	if p := l.managementBus(); exists(p) {
		out = append(out, bus{path: p, idDir: storeDir(l, p)})
	}
	// The agent's own bus is `<agent>/<agent>-messages.db`; a `messages.db`
	// beside it is the listener's bookkeeping.
	agents := filepath.Join(l.home, managementDir, agentsDir)
	for _, agent := range l.subdirs(agents) {
		if p := filepath.Join(agents, agent, agent+agentBusSuffix); exists(p) {
			out = append(out, bus{path: p, idDir: storeDir(l, p)})
		}
	}
	return out
}

// jobBuses are the buses of the `job-*` dirs in dir, sorted. (Listed, not
// globbed: a path may hold a glob's metacharacters.) Whatever stands at a
// bus's name is one: a directory or a FIFO there is a problem its read
// reports (SPEC §9), never a bus skipped.
func (l layout) jobBuses(dir string) []string {
	var out []string
	for _, name := range l.subdirs(dir) {
		if p := filepath.Join(dir, name, busFile); strings.HasPrefix(name, jobPrefix) && exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// readDir lists dir, counted.
func (l layout) readDir(dir string) ([]os.DirEntry, error) {
	if l.lists != nil {
		l.lists.Add(1)
	}
	return os.ReadDir(dir)
}

// subdirs is subdirs, counted.
func (l layout) subdirs(dir string) []string {
	if l.lists != nil {
		l.lists.Add(1)
	}
	return subdirs(dir)
}

// subdirs are the names of the directories in dir, sorted.
func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func (l layout) managementBus() string {
	if l.home == "" {
		return ""
	}
	return filepath.Join(l.home, managementDir, busFile)
}

// sessionDir is where a dispatched worker's files live: the parent of its
// worktree when it has one (a same-repo dispatch: `<dispatcher>/tasks/<sid>`),
// else the chat tier's `<home>/<scope>/sessions/<sid>`; "" when neither
// exists (closed: its dir was removed). streamed is the mtime of the
// worker's stream there, zero when it has none. l is a read's (see
// homeState).
func sessionDir(l layout, r *row) (dir string, streamed time.Time) {
	if r.worktree != "" {
		return sessionAt(filepath.Dir(r.worktree))
	}
	sid := qualifier(r.id)
	if l.home == "" || sid == "" || strings.ContainsAny(sid, `/\`) || sid == ".." {
		return "", time.Time{}
	}
	listed, ok := l.sessions[sid]
	if !ok {
		return "", time.Time{}
	}
	if dir, streamed := sessionAt(listed); dir != "" {
		return dir, streamed
	}
	// A link to no directory: the scopes after it, one by one.
	for _, scope := range l.scopes {
		if dir, streamed := sessionAt(filepath.Join(l.home, scope, sessionsDir, sid)); dir != "" {
			return dir, streamed
		}
	}
	return "", time.Time{}
}

// sessionAt is dir and the mtime of its stream when dir is a directory.
// A worker that runs has a stream, and a stream there means the directory
// is: one stat answers both; the directory is looked at only when there
// is no stream.
func sessionAt(dir string) (string, time.Time) {
	if fi, err := os.Stat(filepath.Join(dir, streamFile)); err == nil {
		return dir, fi.ModTime()
	}
	if isDir(dir) {
		return dir, time.Time{}
	}
	return "", time.Time{}
}

// readPhase reads a worker's metadata.json phase (launching, awaiting,
// complete); "" when it cannot be read.
func readPhase(dir string) string {
	b, err := protocol.ReadFile(filepath.Join(dir, metadataFile), protocol.MaxDocumentSize)
	if err != nil {
		return ""
	}
	var m struct {
		Phase string `json:"phase"`
	}
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Phase
}

func readCfa(dir string) (*model.CfaState, error) {
	b, err := protocol.ReadFile(filepath.Join(dir, protocol.CfaFile), protocol.MaxDocumentSize)
	if err != nil {
		return nil, err
	}
	c, err := protocol.ParseCfa(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, protocol.CfaFile), err)
	}
	return &c, nil
}

// newestStream is the newest mtime of a job's phase streams
// (`.intent-stream.jsonl`, ...), as TeaParty's own reader takes it.
func newestStream(dir string) time.Time {
	var newest time.Time
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), protocol.StreamSuffix) {
			if t := mtime(filepath.Join(dir, e.Name())); t.After(newest) {
				newest = t
			}
		}
	}
	return newest
}

func mtime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
