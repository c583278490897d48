// Package teaparty reads TeaParty's message bus: the `conversations` table
// of every job's `messages.db` and of the management databases, as node
// facts (see package sources). The mapping, with the TeaParty source each
// rule comes from, is in docs/sources.md.
//
// Where the stores live, under a TeaParty home (`<project>/.teaparty`):
//
//	jobs/job-<sid>--<slug>/messages.db        a job's row and every worker it dispatched, at any depth
//	management/messages.db                    paused rows, and the pids the launcher stamps
//	management/agents/<agent>/<agent>-messages.db   the chat tier's conversations and their workers
//
// A job's lead beats through `jobs/<job>/.heartbeat`, the native protocol's
// file, which the native reader owns. Its workers' rows name the job's row
// as their parent; so that the native lead and its bus workers make one
// tree, the key of a job row is the absolute path of the job's
// `.heartbeat`, the key the native reader gives the lead, and a worker's
// ParentHeartbeat names that path. The job row itself becomes a node only
// when the job has no `.heartbeat` (the lead not started yet, or a bus
// written by something else): the native node is the lead otherwise, and
// a question the job waits on at a gate becomes a node under it.
//
// teaparty.go holds the Source; layout.go where the stores are, bus.go the
// reading of one bus, mapping.go a row as node facts.
package teaparty

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// The names of TeaParty's layout.
const (
	homeDir        = ".teaparty"
	jobsDir        = "jobs"
	jobPrefix      = "job-"
	managementDir  = "management"
	agentsDir      = "agents"
	sessionsDir    = "sessions"
	tasksDir       = "tasks"
	busFile        = "messages.db"
	agentBusSuffix = "-messages.db"
	streamFile     = "stream.jsonl"
	metadataFile   = "metadata.json"
	// pausedFile in a TeaParty home marks its project paused by "Pause All".
	pausedFile = "paused"
	table      = "conversations"
	// messagesTable holds the conversations' messages; a bus without it
	// has no questions and no message times.
	messagesTable = "messages"
	// maxQuestion caps the question read from a message, in characters:
	// it is shown on one line.
	maxQuestion = 2000
)

// The types and states of a conversation that the mapping names
// (teaparty/messaging/conversations.py).
const (
	typeJob      = "job"
	typeDispatch = "dispatch"
	typeProxy    = "proxy"

	// A worker's phase, in its metadata.json (runners/launcher.py).
	phaseAwaiting = "awaiting"
	phaseComplete = "complete"

	statePending   = "pending"
	stateActive    = "active"
	statePaused    = "paused"
	stateClosed    = "closed"
	stateWithdrawn = "withdrawn"
)

// Thresholds are TeaParty's own: ClaudeRunner's BEAT_INTERVAL (30 s),
// STALE_THRESHOLD (120 s) and KILL_THRESHOLD (300 s), and the 2 s its
// pid checks allow between a process's create time and pid_started.
func thresholds() model.Thresholds {
	t := model.DefaultThresholds()
	t.Beat = 30 * time.Second
	t.Stale = 120 * time.Second
	t.KillAfter = 300 * time.Second
	t.StartTolerance = 2 * time.Second
	return t
}

// Source reads TeaParty's bus.
type Source struct {
	// BusyTimeout is how long a read waits for a locked database
	// (0: sqlitestore.DefaultBusyTimeout).
	BusyTimeout time.Duration
}

var _ sources.NativeTree = (*Source)(nil)

// New returns the TeaParty source.
func New() *Source { return &Source{} }

// Kind names the source.
func (*Source) Kind() sources.Kind { return sources.TeaParty }

// Thresholds are TeaParty's own defaults (see thresholds).
func (*Source) Thresholds() model.Thresholds { return thresholds() }

// Detect reports whether path holds TeaParty's stores.
func (*Source) Detect(path string) bool {
	_, ok := locate(path)
	return ok
}

// HoldsNativeTree reports whether path is a TeaParty store, whose job dirs
// hold the leads' `.heartbeat`s (and `.cfa-state.json`) that the file
// protocol reads: the scanner walks it as a native root too.
func (*Source) HoldsNativeTree(path string) bool {
	_, ok := locate(path)
	return ok
}

// NativeTraits are the traits of the nodes the file protocol reads in a
// TeaParty tree, a job's lead above all, which beats through its job's
// `.heartbeat`: the same as its row's (see node). Its pid is the current
// turn's `claude`, which `activate_heartbeat` writes at each launch
// (teaparty/runners/claude.py), gone between turns; and a job squash-merges
// its session by itself at DONE (teaparty/cfa/session.py, step 12), as a
// dispatched session is merged by its dispatcher.
func (*Source) NativeTraits() model.Traits {
	return model.Traits{PIDPerTurn: true, MergesItself: true}
}

// WatchPaths are the databases with their -wal files, the jobs dir (a new
// job), each job dir (its lead's streams, its workers' tasks; its bus,
// which TeaParty opens after it made the dir), and the management and
// agents dirs where buses are made too: a dir is named before its bus
// exists, so that the bus's creation is seen.
func (*Source) WatchPaths(path string) []string {
	l, ok := locate(path)
	if !ok {
		return nil
	}
	var paths []string
	if isDir(l.jobs) {
		paths = append(paths, l.jobs)
		for _, name := range subdirs(l.jobs) {
			if strings.HasPrefix(name, jobPrefix) {
				paths = append(paths, filepath.Join(l.jobs, name))
			}
		}
	}
	if l.home != "" {
		management := filepath.Join(l.home, managementDir)
		agents := filepath.Join(management, agentsDir)
		for _, dir := range []string{management, agents} {
			if isDir(dir) {
				paths = append(paths, dir)
			}
		}
		for _, agent := range subdirs(agents) {
			paths = append(paths, filepath.Join(agents, agent))
		}
	}
	for _, b := range l.buses() {
		paths = append(paths, b.path, b.path+"-wal")
	}
	return paths
}

// Read reads every bus of the store at path.
func (s *Source) Read(root string, now time.Time) sources.Facts {
	var facts sources.Facts
	l, ok := locate(root)
	if !ok {
		facts.Problems = append(facts.Problems, model.Problem{Path: root, Error: fmt.Sprintf("read %s: no TeaParty store", root)})
		return facts
	}
	l = l.homeState()
	buses := l.buses()
	// Each bus is its own database, read in its own short transaction:
	// they are read side by side.
	reads := make([]busRead, len(buses))
	each(len(buses), func(i int) {
		reads[i].rows, reads[i].nulls, reads[i].err = s.read(buses[i])
	})
	var all []*row
	var stamps map[string]*row // the management bus's rows, by id: where the launcher stamps pids
	// The keys of each bus's rows, by id: what a child's parent key is.
	// The rows themselves go as soon as their nodes are made.
	keysOf := map[*bus]map[string]string{}
	for i, b := range buses {
		rows, err := reads[i].rows, reads[i].err
		reads[i].rows = nil
		if err != nil {
			facts.Problems = append(facts.Problems, model.Problem{Path: b.path, Error: err.Error()})
			continue
		}
		facts.Problems = append(facts.Problems, reads[i].nulls...)
		if b.path == l.managementBus() {
			stamps = map[string]*row{}
			for _, r := range rows {
				stamps[r.id] = r
			}
		}
		if len(rows) > 0 {
			keysOf[rows[0].bus] = make(map[string]string, len(rows))
		}
		all = append(all, rows...)
	}

	// The launcher stamps a worker's pid into the management bus, by id,
	// while the worker's row lives in its job's bus or an agent's bus
	// (teaparty/runners/launcher.py): read the pid where it is written. A
	// management row of the same id as another bus's row (its twin) is
	// that row's stamp, not a conversation of its own. Every other
	// management row is one: the bridge's startup sweep pauses them and
	// its dispatch-tree endpoint walks them (teaparty/bridge/server.py).
	twinOf := map[*row]*row{}
	for _, r := range all {
		st, ok := stamps[r.id]
		if !ok || st == r {
			continue
		}
		if twinOf[st] == nil {
			twinOf[st] = r
		}
		if r.pid <= 0 && st.pid > 0 {
			r.pid, r.pidStarted, r.pidFrom = st.pid, st.pidStarted, st.bus.path
		}
	}

	for _, r := range all {
		r.key = key(r)
	}
	for _, r := range all {
		// A management row whose parent is a stamp hangs under the twin.
		keysOf[r.bus][r.id] = cmp.Or(twinOf[r], r).key
	}
	// A row's node reads the files beside its row (a worker's stream and
	// phase, a job's CfA): the rows are mapped side by side too, each
	// reading only the maps above. A row mapped is let go: a million rows
	// are not held beside their million nodes.
	nodes := make([]*model.Node, len(all))
	each(len(all), func(i int) {
		if r := all[i]; twinOf[r] == nil {
			nodes[i] = node(l, r, keysOf[r.bus])
		}
		all[i] = nil
	})
	facts.Nodes = slices.DeleteFunc(nodes, func(n *model.Node) bool { return n == nil })
	return facts
}

// busRead is what the read of one bus found.
type busRead struct {
	rows  []*row
	nulls []model.Problem // the rows a NULL cost (see nullAt)
	err   error
}

// readers bounds the goroutines of a read. A bus's read is mostly system
// calls, during which another goroutine runs: on 2 cores 4 readers read
// 100 buses faster than 2 (BenchmarkRead100Jobs). And a home of hundreds
// of jobs must not hold hundreds of databases open at once, however many
// cores there are.
var readers = min(16, max(4, 2*runtime.GOMAXPROCS(0)))

// each runs f(i) for every i in [0, n) on up to readers goroutines, and
// returns when all have. A panic in f is raised again in the caller, where
// the scanner turns a source's panic into a problem of its root: a
// goroutine's own panic would end the process.
func each(n int, f func(i int)) {
	var next atomic.Int64
	var failed atomic.Pointer[any]
	work := func() {
		defer func() {
			if p := recover(); p != nil {
				failed.CompareAndSwap(nil, &p)
			}
		}()
		for i := int(next.Add(1) - 1); i < n && failed.Load() == nil; i = int(next.Add(1) - 1) {
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range min(n, readers) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if p := failed.Load(); p != nil {
		panic(*p)
	}
}
