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
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
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
	// queried counts the reads of each bus (see Queries).
	queriedMu sync.Mutex
	queried   map[string]int64
	// lists counts the dirs a read listed: what a read whose dirs did not
	// change lists none of.
	lists atomic.Int64
	// mapped counts the rows mapped onto nodes: what a commit into a
	// bus keeps to the rows it changed (each mapping looks at the files
	// beside its row, a worker's session dir first).
	mapped atomic.Int64
	// held holds the connections of the buses a live read follows.
	held sqlitestore.Held
}

var (
	_ sources.NativeTree = (*Source)(nil)
	_ sources.Rereader   = (*Source)(nil)
	_ sources.Versioned  = (*Source)(nil)
)

// Queries is how many times the source has queried each bus, by path:
// what a read of a store whose databases did not change leaves as it was.
func (s *Source) Queries() map[string]int64 {
	s.queriedMu.Lock()
	defer s.queriedMu.Unlock()
	return maps.Clone(s.queried)
}

// noteQuery counts a read of the bus at path.
func (s *Source) noteQuery(path string) {
	s.queriedMu.Lock()
	defer s.queriedMu.Unlock()
	if s.queried == nil {
		s.queried = map[string]int64{}
	}
	s.queried[path]++
}

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

// Read reads every bus of the store at path. It keeps nothing for a next
// read: a row is let go once its node is made, so that a million rows are
// not held beside their million nodes (SPEC §8).
func (s *Source) Read(root string, now time.Time) sources.Facts {
	facts, _ := s.reread(root, now, nil, nil, false)
	return facts
}

// Reread reads the store at path again (sources.Rereader): the buses whose
// database or -wal changed are queried, the others keep their rows; the
// rows of those buses, and of a bus whose dir changed (a job's lead's
// `.heartbeat` and streams are read with its rows), are mapped again, the
// others keep their nodes. A row's pid may be stamped in the management
// bus, and a management row is no node when another bus holds its twin:
// a change of the management bus or of the home's own state maps every
// row again, and a bus listed, gone, or holding other rows than it held
// maps the management bus's again (still querying only what changed).
func (s *Source) Reread(root string, now time.Time, k sources.Kept, changed []string) (sources.Facts, sources.Kept) {
	return s.reread(root, now, k, changed, true)
}

// reread is Reread; keep says whether what it read is kept for the next.
// Its steps: where the store is and what the home holds (kept while its
// dirs are as they were), which buses to list, query and map again
// (plan), the queries (queryBuses), what the queries moved beyond their
// own rows (whatMoved), the pids the management bus stamps (stampsOf),
// and the rows mapped again (mapRows).
func (s *Source) reread(root string, now time.Time, k sources.Kept, changed []string, keep bool) (sources.Facts, sources.Kept) {
	l, ok := locate(root)
	if !ok {
		return sources.Facts{Problems: []model.Problem{{Path: root, Error: fmt.Sprintf("read %s: no TeaParty store", root)}}}, nil
	}
	last, _ := k.(*kept)
	if last != nil && changed != nil && len(changed) == 0 {
		return last.facts(), last
	}
	l.lists = &s.lists
	var lastHome *layout
	if last != nil {
		lastHome = &last.home
	}
	l = l.homeState(lastHome)
	p := plan(l, last, changed)
	next := &kept{home: l, buses: make([]keptBus, len(p.buses)), listStamps: p.listStamps}
	if !p.listed {
		// The same buses in the same order: the same indexes.
		next.byPath, next.byDir = last.byPath, last.byDir
	}
	queried := s.queryBuses(next, p, keep)
	m := &mapping{layout: l, management: l.managementBus(), keep: keep}
	m.all, m.twinsMoved = whatMoved(l, last, next, p, queried, m.management)
	if last != nil && !m.all && !m.twinsMoved {
		// No management row and no bus's ids moved: the same stamps and
		// twins, not every row of the home looked at again.
		m.stamps, m.twin = last.stamps, last.twin
	} else {
		m.stamps, m.twin = stampsOf(next.buses, m.management)
	}
	next.stamps, next.twin = m.stamps, m.twin
	s.mapRows(m, next, p, queried)
	return next.facts(), next
}

// queryBuses reads the buses of next as p says: a bus p queries is read
// (through its held connection when what is read is kept), unless its
// commit mark is still the one its last read took, nothing committed
// since (the watcher's look at the mark was older); every other bus keeps
// the last read's rows and nodes. It reports which buses were queried.
func (s *Source) queryBuses(next *kept, p reread, keep bool) []bool {
	queried := make([]bool, len(p.buses))
	// Each bus is its own database, read in its own short transaction:
	// they are read side by side.
	each(len(p.buses), func(i int) {
		kb := &next.buses[i]
		kb.bus = p.buses[i]
		old := p.kept[i]
		keepOld := func() {
			kb.rows, kb.nulls, kb.err, kb.nodes, kb.mark = old.rows, old.nulls, old.err, old.nodes, old.mark
		}
		if old != nil && !p.query[i] {
			keepOld()
			return
		}
		since := ""
		if keep && old != nil && old.err == nil {
			since = old.mark
		}
		rows, nulls, mark, moved, err := s.read(kb.bus, keep, since)
		if !moved {
			keepOld()
			return
		}
		kb.rows, kb.nulls, kb.mark, kb.err = rows, nulls, mark, err
		s.noteQuery(kb.bus.path)
		queried[i] = true
	})
	return queried
}

// whatMoved says what the queries moved beyond their own rows: all, that
// every row is mapped again (a first read, the home's state moved, the
// management bus queried: its stamps may name any bus's row); twinsMoved,
// that the management bus's rows are (a bus listed anew, gone, or holding
// other rows than it held: a management row may have gained or lost its
// twin).
func whatMoved(l layout, last, next *kept, p reread, queried []bool, management string) (all, twinsMoved bool) {
	all = last == nil || !sameHome(l, last.home)
	twinsMoved = p.listed
	for i, kb := range next.buses {
		if !queried[i] {
			continue
		}
		if kb.bus.path == management {
			all = true
		}
		if old := p.kept[i]; old == nil || !sameIDs(old.rows, kb.rows) || (old.err == nil) != (kb.err == nil) {
			twinsMoved = true
		}
	}
	return all, twinsMoved
}

// stampsOf are the management bus's rows by id (stamps) and, by id, each
// one's twin: the first other bus's row of its id.
//
// The launcher stamps a worker's pid into the management bus, by id,
// while the worker's row lives in its job's bus or an agent's bus
// (teaparty/runners/launcher.py): read the pid where it is written. A
// management row of the same id as another bus's row (its twin) is that
// row's stamp, not a conversation of its own. Every other management row
// is one: the bridge's startup sweep pauses them and its dispatch-tree
// endpoint walks them (teaparty/bridge/server.py).
func stampsOf(buses []keptBus, management string) (stamps, twin map[string]*row) {
	stamps, twin = map[string]*row{}, map[string]*row{}
	for _, kb := range buses {
		if kb.err == nil && kb.bus.path == management {
			for _, r := range kb.rows {
				stamps[r.id] = r
			}
		}
	}
	for _, kb := range buses {
		if kb.err != nil || kb.bus.path == management {
			continue
		}
		for _, r := range kb.rows {
			if _, ok := stamps[r.id]; ok && twin[r.id] == nil {
				twin[r.id] = r
			}
		}
	}
	return stamps, twin
}

// mapping is what a read maps its rows again with.
type mapping struct {
	layout          layout
	management      string
	keep            bool
	all, twinsMoved bool
	stamps, twin    map[string]*row // see stampsOf
}

// mapJob is one row to map again: its bus and its index there.
type mapJob struct{ bus, row int }

// mapRows maps again the rows of next's buses that need it (see
// rowsToMap), side by side: a row's node reads the files beside its row
// (a worker's stream and phase, a job's CfA), each reading only its bus's
// keys.
func (s *Source) mapRows(m *mapping, next *kept, p reread, queried []bool) {
	var jobs []mapJob
	keysOf := make([]map[string]string, len(next.buses))
	mapped := make([][]*row, len(next.buses))
	for i := range next.buses {
		jobs = m.rowsToMap(i, &next.buses[i], p, queried[i], &keysOf[i], &mapped[i], jobs)
	}
	each(len(jobs), func(n int) {
		i, j := jobs[n].bus, jobs[n].row
		r := mapped[i][j]
		mapped[i][j] = nil
		if !m.keep {
			next.buses[i].rows[j] = nil
		}
		if r.bus.path == m.management && m.twin[r.id] != nil {
			return
		}
		s.mapped.Add(1)
		next.buses[i].nodes[j] = node(m.layout, r, keysOf[i])
	})
}

// rowsToMap notes the rows of the bus kb (the i-th) to map again, their
// copies in mapped and the keys of its every row in keys, and returns jobs
// with them added. A bus is mapped again when every row is (m.all), when
// it was queried or its dir moved, or, the management bus, when its twins
// may have moved. A child's parent key is its parent row's key, shared,
// not a copy each.
func (m *mapping) rowsToMap(i int, kb *keptBus, p reread, queried bool, keys *map[string]string, mapped *[]*row, jobs []mapJob) []mapJob {
	isManagement := kb.bus.path == m.management
	if kb.err != nil || !(m.all || queried || p.dirty[i] || isManagement && m.twinsMoved) {
		return jobs
	}
	*mapped = make([]*row, len(kb.rows))
	*keys = make(map[string]string, len(kb.rows))
	kb.nodes = make([]*model.Node, len(kb.rows))
	old := p.kept[i]
	reuse := m.reusable(kb, old, isManagement || p.dirty[i])
	for j, r := range kb.rows {
		if reuse && sameRow(old.rows[j], r) {
			kb.nodes[j] = old.nodes[j]
			(*keys)[r.id] = key(r)
			continue
		}
		c := m.stamped(r, isManagement)
		(*mapped)[j] = c
		(*keys)[c.id] = c.key
		if t := m.twin[c.id]; isManagement && t != nil {
			// A management row whose parent is a stamp hangs under the twin.
			(*keys)[c.id] = key(t)
		}
		jobs = append(jobs, mapJob{i, j})
	}
	return jobs
}

// reusable reports whether the rows of kb that the last read (old) holds
// as they are keep their nodes: a bus queried for a commit, nothing beside
// it moved (moved: its dir, or it is the management bus), keeps the node
// of a row the commit left as it was (its session dir is not looked at
// again), as a bus no commit touched keeps all of its.
func (m *mapping) reusable(kb, old *keptBus, moved bool) bool {
	return m.keep && !m.all && !moved && old != nil && old.err == nil &&
		len(old.nodes) == len(kb.rows) && sameIDs(old.rows, kb.rows)
}

// stamped is r as it is mapped again: a copy when the rows are kept (the
// kept ones stay as the bus holds them), given the pid the management bus
// stamps for it, and its key.
func (m *mapping) stamped(r *row, isManagement bool) *row {
	c := r
	if m.keep {
		cp := *r
		c = &cp
	}
	if st := m.stamps[c.id]; !isManagement && st != nil && c.pid <= 0 && st.pid > 0 {
		c.pid, c.pidStarted, c.pidFrom = st.pid, st.pidStarted, st.bus.path
	}
	c.key = key(c)
	return c
}

// kept is what a read of a store keeps for the next (sources.Rereader):
// the home's state it mapped the rows with and, per bus, in the order
// listed, its rows as the bus holds them (never stamped) or its error, and
// the nodes of its rows (nil where a row is no node).
type kept struct {
	home  layout
	buses []keptBus
	// byPath and byDir are the buses' indexes by their database's path
	// and by the dir holding it (see index).
	byPath, byDir map[string]int
	// listStamps are the dirs the buses were listed from (the jobs dir,
	// the management dir and its agents dir), as they were before.
	listStamps []dirStamp
	// stamps and twin are the management bus's rows and their twins (see
	// stampsOf), handed on while no management row and no bus's ids
	// moved (a twin's key is made of its id, which names its type).
	stamps, twin map[string]*row
}

// index is k's buses' indexes by their database's path and by the dir
// holding it, made at the first read that follows k and handed on to the
// next kept while the buses listed are the same, in the same order (see
// reread): not made again at every commit.
func (k *kept) index() (byPath, byDir map[string]int) {
	if k.byPath == nil {
		k.byPath, k.byDir = make(map[string]int, len(k.buses)), make(map[string]int, len(k.buses))
		for i, kb := range k.buses {
			k.byPath[kb.bus.path] = i
			k.byDir[filepath.Dir(kb.bus.path)] = i
		}
	}
	return k.byPath, k.byDir
}

type keptBus struct {
	bus   bus
	rows  []*row
	nulls []model.Problem // the rows a NULL cost (see nullAt)
	err   error
	nodes []*model.Node
	// mark is the bus's commit mark before its rows were read ("": not
	// known): while it is the bus's mark, nothing was committed since.
	mark string
}

// facts are the store's facts as kept: the nodes and problems of every
// bus in order.
func (k *kept) facts() sources.Facts {
	var facts sources.Facts
	// Made once at its size: grown row by row, a home's thousand nodes
	// were copied ten times over at every commit.
	n := 0
	for _, kb := range k.buses {
		n += len(kb.nodes)
	}
	if n > 0 {
		facts.Nodes = make([]*model.Node, 0, n)
	}
	for _, kb := range k.buses {
		if kb.err != nil {
			facts.Problems = append(facts.Problems, model.Problem{Path: kb.bus.path, Error: kb.err.Error()})
			continue
		}
		facts.Problems = append(facts.Problems, kb.nulls...)
		for _, n := range kb.nodes {
			if n != nil {
				facts.Nodes = append(facts.Nodes, n)
			}
		}
	}
	return facts
}

// reread is which buses a read lists, queries and maps again.
type reread struct {
	buses  []bus
	kept   []*keptBus // the last read's, nil for a bus it did not list
	query  []bool
	dirty  []bool // its dir, or a file in it, moved (or what moved is not known): every row is mapped again
	listed bool   // the buses listed are not the last read's
	// listStamps are the dirs the buses were listed from, as they were
	// before that listing (see kept).
	listStamps []dirStamp
}

// plan says what a read after the changed watch paths reads (see Reread).
// A database or its -wal queries its bus; the dir holding a bus, or a file
// in it, maps its rows again; a dir the buses were listed from, as it was
// then, nothing (the periodic read names every dir); any other dir or
// file, or a bus's dir whose bus is gone, lists the buses again (a new
// job's bus, an agent's).
func plan(l layout, last *kept, changed []string) reread {
	p := reread{listed: last == nil}
	touched, dirs, relist := classify(last, changed)
	if relist {
		p.listStamps = stampLists(l)
		p.buses = l.buses()
	} else {
		p.listStamps = last.listStamps
		p.buses = make([]bus, len(last.buses))
		for i, kb := range last.buses {
			p.buses[i] = kb.bus
		}
	}
	var byPath map[string]int
	if last != nil {
		byPath, _ = last.index()
		p.listed = len(p.buses) != len(last.buses)
	}
	p.kept = make([]*keptBus, len(p.buses))
	p.query, p.dirty = make([]bool, len(p.buses)), make([]bool, len(p.buses))
	for i, b := range p.buses {
		if j, ok := byPath[b.path]; ok {
			p.kept[i] = &last.buses[j]
		}
		p.listed = p.listed || last.buses[i].bus != b
		p.query[i] = p.kept[i] == nil || changed == nil || touched[b.path]
		p.dirty[i] = changed == nil || dirs[b.path]
	}
	return p
}

// classify sorts the changed watch paths by the last read's buses: the
// buses whose database or -wal moved (touched), those whose dir or a file
// in it did (dirs), and whether the buses are to be listed again.
func classify(last *kept, changed []string) (touched, dirs map[string]bool, relist bool) {
	if last == nil || changed == nil {
		return nil, nil, true
	}
	byPath, byDir := last.index()
	// dirOf is the bus the dir holds, while the bus is there.
	dirOf := func(dir string) (string, bool) {
		i, ok := byDir[dir]
		if ok && exists(last.buses[i].bus.path) {
			return last.buses[i].bus.path, true
		}
		return "", false
	}
	touched, dirs = map[string]bool{}, map[string]bool{}
	for _, c := range changed {
		if db := strings.TrimSuffix(c, "-wal"); hasKey(byPath, db) {
			touched[db] = true
		} else if db, ok := dirOf(c); ok {
			dirs[db] = true
		} else if db, ok := dirOf(filepath.Dir(c)); ok {
			dirs[db] = true // a file in a bus's dir: its lead's
		} else if !last.listedStill(c) {
			relist = true
		}
	}
	return touched, dirs, relist
}

// stampLists are the stamps of the dirs l's buses are listed from, taken
// before they are listed.
func stampLists(l layout) []dirStamp {
	at := time.Now()
	stamps := []dirStamp{stampDir(l.jobs, at)}
	if l.home != "" {
		management := filepath.Join(l.home, managementDir)
		stamps = append(stamps, stampDir(management, at), stampDir(filepath.Join(management, agentsDir), at))
	}
	return stamps
}

// listedStill reports whether dir is one the buses were listed from, as
// it was then: no job or agent came or went there.
func (k *kept) listedStill(dir string) bool {
	for _, d := range k.listStamps {
		if d.path == dir {
			return d.still()
		}
	}
	return false
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// sameHome reports whether two reads of a home saw the same state.
func sameHome(a, b layout) bool {
	return a.pausedBy == b.pausedBy && slices.Equal(a.scopes, b.scopes)
}

// sameRow reports whether two reads of a bus found a row the same (as the
// bus holds it, never stamped).
func sameRow(a, b *row) bool {
	x, y := *a, *b
	x.question, y.question, x.bus, y.bus = nil, nil, nil, nil
	if x != y || *a.bus != *b.bus || (a.question == nil) != (b.question == nil) {
		return false
	}
	return a.question == nil || *a.question == *b.question
}

// sameIDs reports whether two reads of a bus hold the same rows by id (a
// row added or gone may make a management row a twin, or no more one).
func sameIDs(a, b []*row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].id != b[i].id {
			return false
		}
	}
	return true
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
