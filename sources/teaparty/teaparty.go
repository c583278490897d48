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
package teaparty

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
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

// requiredColumns are those of TeaParty's CREATE TABLE: a table without
// them is not its bus. The later columns it adds in place by ALTER TABLE
// may be missing from a database no TeaParty has opened since; they read
// as the defaults those ALTERs give.
var requiredColumns = []string{"id", "type", "state", "created_at"}

var columns = []sqlitestore.Column{
	{Name: "id", Type: "TEXT", Default: "''"},
	{Name: "type", Type: "TEXT", Default: "''"},
	{Name: "state", Type: "TEXT", Default: "''"},
	{Name: "created_at", Type: "REAL", Default: "0.0"},
	{Name: "awaiting_input", Type: "INTEGER", Default: "0"},
	{Name: "agent_name", Type: "TEXT", Default: "''"},
	{Name: "parent_conversation_id", Type: "TEXT", Default: "''"},
	{Name: "request_id", Type: "TEXT", Default: "''"},
	{Name: "project_slug", Type: "TEXT", Default: "''"},
	{Name: "worktree_path", Type: "TEXT", Default: "''"},
	{Name: "pid", Type: "INTEGER", Default: "0"},
	{Name: "pid_started", Type: "REAL", Default: "0.0"},
}

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

// New returns the TeaParty source.
func New() *Source { return &Source{} }

// Kind names the source.
func (*Source) Kind() sources.Kind { return sources.TeaParty }

// Thresholds are TeaParty's own defaults (see thresholds).
func (*Source) Thresholds() model.Thresholds { return thresholds() }

// layout is where a root's stores are: home is the TeaParty home ("" when
// the root is a jobs dir outside one), jobs the dir of the jobs.
type layout struct {
	root, home, jobs string
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
	if len(jobBuses(abs)) > 0 {
		return layout{root: abs, jobs: abs}, true
	}
	return layout{}, false
}

// Detect reports whether path holds TeaParty's stores.
func (*Source) Detect(path string) bool {
	_, ok := locate(path)
	return ok
}

// WatchPaths are the databases with their -wal files, the jobs dir (a new
// job) and each job dir (its lead's streams, its workers' tasks).
func (*Source) WatchPaths(path string) []string {
	l, ok := locate(path)
	if !ok {
		return nil
	}
	var paths []string
	if isDir(l.jobs) {
		paths = append(paths, l.jobs)
	}
	for _, b := range l.buses() {
		if b.job != "" {
			paths = append(paths, b.job)
		}
		paths = append(paths, b.path, b.path+"-wal")
	}
	return paths
}

// bus is one database holding conversations; job is its job dir ("" for
// a management bus).
type bus struct {
	path, job string
}

// buses lists the databases of the layout: every job's, the management
// bus, and the chat tier's agent buses, in a stable order.
func (l layout) buses() []bus {
	var out []bus
	for _, p := range jobBuses(l.jobs) {
		out = append(out, bus{path: p, job: filepath.Dir(p)})
	}
	if l.home == "" {
		return out
	}
	if p := l.managementBus(); isFile(p) {
		out = append(out, bus{path: p})
	}
	// The agent's own bus is `<agent>/<agent>-messages.db`; a `messages.db`
	// beside it is the listener's bookkeeping.
	agents := filepath.Join(l.home, managementDir, agentsDir)
	for _, agent := range subdirs(agents) {
		if p := filepath.Join(agents, agent, agent+agentBusSuffix); isFile(p) {
			out = append(out, bus{path: p})
		}
	}
	return out
}

// jobBuses are the buses of the `job-*` dirs in dir, sorted. (Listed, not
// globbed: a path may hold a glob's metacharacters.)
func jobBuses(dir string) []string {
	var out []string
	for _, name := range subdirs(dir) {
		if p := filepath.Join(dir, name, busFile); strings.HasPrefix(name, jobPrefix) && isFile(p) {
			out = append(out, p)
		}
	}
	return out
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

// row is one conversation as the bus holds it.
type row struct {
	id, typ, state     string
	createdAt          float64
	awaitingInput      bool
	agent, parent      string
	requestID, project string
	worktree           string
	pid                int
	pidStarted         float64
	question           *model.Blocked // awaiting_input: the last message not from a human
	pidFrom            string         // the database the pid was read from, when not the row's
	lastMessage        float64        // the newest message of the conversation (epoch seconds)
	bus                bus
}

// read reads the conversations of one bus in one short transaction.
func (s *Source) read(b bus) ([]*row, error) {
	snap, err := sqlitestore.Open(b.path, s.BusyTimeout)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	cols, err := snap.Columns(table)
	if err != nil {
		return nil, err
	}
	if err := sqlitestore.Require(snap.Path, table, cols, requiredColumns); err != nil {
		return nil, err
	}
	rows, err := snap.Query(`SELECT ` + sqlitestore.Select(cols, columns) + ` FROM ` + table + ` ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*row
	for rows.Next() {
		r := &row{bus: b}
		var awaiting int64
		var pid int64
		if err := rows.Scan(&r.id, &r.typ, &r.state, &r.createdAt, &awaiting, &r.agent, &r.parent,
			&r.requestID, &r.project, &r.worktree, &pid, &r.pidStarted); err != nil {
			return nil, sqlitestore.Describe(snap.Path, err)
		}
		r.awaitingInput = awaiting != 0
		r.pid = int(pid)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlitestore.Describe(snap.Path, err)
	}
	if err := readQuestions(snap, out); err != nil {
		return nil, err
	}
	if err := readLastMessages(snap, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readQuestions fills the question of every row awaiting input: the last
// message of its conversation not sent by the human (TeaParty's
// check_message_bus_request reads the same). A bus without messages
// leaves the question empty.
func readQuestions(snap *sqlitestore.Snapshot, rows []*row) error {
	has, err := snap.HasTable("messages")
	if err != nil || !has {
		return err
	}
	for _, r := range rows {
		if !r.awaitingInput && !(r.typ == typeProxy && live(r.state)) {
			continue
		}
		res, err := snap.Query(`SELECT substr(CAST(content AS TEXT), 1, ?), IFNULL(CAST(timestamp AS REAL), 0.0) FROM messages WHERE conversation = ? AND sender <> 'human' ORDER BY timestamp DESC LIMIT 1`, maxQuestion, r.id)
		if err != nil {
			return err
		}
		q := &model.Blocked{Path: snap.Path + "#" + r.id}
		for res.Next() {
			var ts float64
			if err := res.Scan(&q.Question, &ts); err != nil {
				res.Close()
				return sqlitestore.Describe(snap.Path, err)
			}
			q.Since = epochSeconds(ts)
		}
		res.Close()
		r.question = q
	}
	return nil
}

// readLastMessages takes the time of each chat conversation's newest
// message: a conversation's turns leave no stream of their own in the bus.
func readLastMessages(snap *sqlitestore.Snapshot, rows []*row) error {
	has, err := snap.HasTable("messages")
	if err != nil || !has {
		return err
	}
	res, err := snap.Query(`SELECT CAST(conversation AS TEXT), MAX(IFNULL(CAST(timestamp AS REAL), 0.0)) FROM messages GROUP BY conversation`)
	if err != nil {
		return err
	}
	defer res.Close()
	last := map[string]float64{}
	for res.Next() {
		var conv string
		var ts float64
		if err := res.Scan(&conv, &ts); err != nil {
			return sqlitestore.Describe(snap.Path, err)
		}
		last[conv] = ts
	}
	if err := res.Err(); err != nil {
		return sqlitestore.Describe(snap.Path, err)
	}
	for _, r := range rows {
		r.lastMessage = last[r.id]
	}
	return nil
}

// Read reads every bus of the store at path.
func (s *Source) Read(root string, now time.Time) sources.Facts {
	var facts sources.Facts
	l, ok := locate(root)
	if !ok {
		facts.Problems = append(facts.Problems, model.Problem{Path: root, Error: fmt.Sprintf("read %s: no TeaParty store", root)})
		return facts
	}
	var all []*row
	var stamps map[string]*row // the management bus's rows, by id: where the launcher stamps pids
	for _, b := range l.buses() {
		rows, err := s.read(b)
		if err != nil {
			facts.Problems = append(facts.Problems, model.Problem{Path: b.path, Error: err.Error()})
			continue
		}
		if b.path == l.managementBus() {
			stamps = map[string]*row{}
			for _, r := range rows {
				stamps[r.id] = r
			}
		}
		all = append(all, rows...)
	}

	// The launcher stamps a worker's pid into the management bus, by id,
	// while the worker's row lives in its job's bus or an agent's bus
	// (teaparty/runners/launcher.py): read the pid where it is written. A
	// management row that only carries a stamp for another bus's row is
	// that row's, not a conversation of its own.
	stampOnly := map[*row]bool{}
	for _, r := range all {
		st, ok := stamps[r.id]
		if !ok || st == r {
			continue
		}
		stampOnly[st] = true
		if r.pid <= 0 && st.pid > 0 {
			r.pid, r.pidStarted, r.pidFrom = st.pid, st.pidStarted, st.bus.path
		}
	}

	byBus := map[string]map[string]*row{}
	for _, r := range all {
		if byBus[r.bus.path] == nil {
			byBus[r.bus.path] = map[string]*row{}
		}
		byBus[r.bus.path][r.id] = r
	}
	for _, r := range all {
		if stampOnly[r] {
			continue
		}
		if n := node(l, r, byBus[r.bus.path]); n != nil {
			facts.Nodes = append(facts.Nodes, n)
		}
	}
	return facts
}

// key is a row's key across every store of the host. A job's row is keyed
// by its job's `.heartbeat`, the key of the native lead (see the package
// doc); every other row by its database and id.
func key(r *row) string {
	if r.typ == typeJob && r.bus.job != "" {
		return filepath.Join(r.bus.job, protocol.HeartbeatFile)
	}
	return r.bus.path + "#" + r.id
}

// parentKey is the key of the row's parent: the row of that id in the
// same bus, or, for a parent absent from the bus, the key it would have
// there (the scanner finds no node: the child is orphaned).
func parentKey(r *row, rows map[string]*row) string {
	if r.parent == "" {
		return ""
	}
	if p, ok := rows[r.parent]; ok {
		return key(p)
	}
	return r.bus.path + "#" + r.parent
}

// node maps one row onto node facts; nil for a row that is not a node of
// its own (a job row whose lead the native reader shows).
func node(l layout, r *row, rows map[string]*row) *model.Node {
	jobLead := r.typ == typeJob && r.bus.job != ""
	if jobLead && exists(filepath.Join(r.bus.job, protocol.HeartbeatFile)) {
		return gate(l, r)
	}
	hb := &model.Heartbeat{
		PID:             r.pid,
		Started:         r.pidStarted,
		Status:          status(r),
		Role:            r.agent,
		Team:            r.project,
		TaskID:          qualifier(r.id),
		Worktree:        r.worktree,
		ParentHeartbeat: parentKey(r, rows),
		HasParentField:  true,
	}
	n := &model.Node{
		ID:            storeID(l, r),
		Root:          l.root,
		HeartbeatPath: key(r),
		HasHeartbeat:  true,
		Heartbeat:     hb,
		Source:        string(sources.TeaParty),
	}
	created := epochSeconds(r.createdAt)
	n.BeatMtime = created
	// No beat column: the newest write of the agent's stream is its sign
	// of life, and it moves only while a turn runs.
	var phase string
	switch {
	case jobLead:
		n.InfraDir = r.bus.job
		if cfa, err := readCfa(r.bus.job); err == nil {
			n.Cfa = cfa
		} else if !errors.Is(err, fs.ErrNotExist) {
			n.Problems = append(n.Problems, model.Problem{Path: filepath.Join(r.bus.job, protocol.CfaFile), Error: err.Error()})
		}
		n.ActivityMtime = newestStream(r.bus.job)
	case r.typ == typeDispatch:
		if dir := sessionDir(l, r); dir != "" {
			n.InfraDir = dir
			n.ActivityMtime = mtime(filepath.Join(dir, streamFile))
			phase = readPhase(dir)
		}
	case chat(r):
		n.ActivityMtime = epochSeconds(r.lastMessage)
	}
	if n.ActivityMtime.After(n.BeatMtime) {
		n.BeatMtime = n.ActivityMtime
	}
	var pausedBy string
	switch marker := filepath.Join(l.home, pausedFile); {
	case !live(r.state):
	case phase == phaseComplete:
		// The worker gave its final reply; its row stays active until its
		// dispatcher closes it, merging its work.
		hb.Status = "completed"
	case l.home != "" && exists(marker):
		// "Pause All" cancels the project's turns and leaves its rows
		// active, marking the project instead.
		hb.Status, pausedBy = "paused", marker
		n.Traits.NoProcessExpected = true
	case phase == phaseAwaiting:
		// Between turns, waiting on the workers it dispatched: no process
		// runs until their replies relaunch it.
		hb.Status = "running"
		n.Traits.NoProcessExpected = true
	case chat(r):
		// A chat conversation (the office manager, a project lead) lives
		// as long as the bridge that holds it, with a process only while
		// it answers.
		hb.Status = "running"
		n.Traits.NoProcessExpected = true
	}
	if r.awaitingInput && r.state == stateActive {
		n.Blocked = r.question
	}
	if r.typ == typeProxy && live(r.state) {
		// An escalation is a question to a human, open until it is
		// answered; no process of its own runs meanwhile.
		n.Blocked = r.question
		if n.Blocked == nil {
			n.Blocked = &model.Blocked{Path: key(r)}
		}
		if n.Blocked.Question == "" {
			n.Blocked.Question = "escalation " + r.requestID + " open"
		}
		n.Traits.NoProcessExpected = true
	}
	if n.Blocked != nil && n.Blocked.Since.After(n.BeatMtime) {
		n.BeatMtime = n.Blocked.Since
	}
	// A turn's pid: gone between turns while the engine lives.
	n.Traits.PIDPerTurn = r.typ == typeDispatch || r.typ == typeJob
	if r.state == statePaused {
		n.Traits.NoProcessExpected = true
	}
	// A job squash-merges its worktree into the project by itself; a
	// worker is merged by its dispatcher's CloseConversation.
	n.Traits.MergesItself = true
	n.SourceFields = fields(r, phase, pausedBy)
	return n
}

// gate is the node of a job's question at a CfA gate when the job's lead is
// the native reader's node: the flag is on the job's row, which makes no
// node then, and the question must not be lost with it. It hangs under
// the lead, blocked, a human's to answer; no process runs for it. nil when
// the job waits on nothing.
func gate(l layout, r *row) *model.Node {
	if !r.awaitingInput || r.state != stateActive {
		return nil
	}
	b := r.question
	if b == nil {
		b = &model.Blocked{}
	}
	if b.Question == "" {
		b.Question = "the job waits for input at a gate"
	}
	n := &model.Node{
		ID:            storeID(l, r),
		Root:          l.root,
		HeartbeatPath: r.bus.path + "#" + r.id,
		HasHeartbeat:  true,
		Heartbeat: &model.Heartbeat{
			Status:          "running",
			Role:            r.agent,
			Team:            r.project,
			TaskID:          qualifier(r.id),
			ParentHeartbeat: key(r),
			HasParentField:  true,
		},
		BeatMtime: epochSeconds(r.createdAt),
		Blocked:   b,
		Source:    string(sources.TeaParty),
		Traits:    model.Traits{NoProcessExpected: true, MergesItself: true},
	}
	if b.Since.After(n.BeatMtime) {
		n.BeatMtime = b.Since
	}
	n.SourceFields = append(fields(r, "", ""), model.Field{Name: "gate", Value: "the job's lead waits for a human's answer"})
	return n
}

// status maps a row's state onto the heartbeat vocabulary (SPEC §1): a
// live row with no pid has no process yet (or none stamped), so it is
// starting; closed is completed (merged, or closed by recovery).
func status(r *row) string {
	switch r.state {
	case statePending:
		return "starting"
	case stateActive:
		if r.pid <= 0 {
			return "starting"
		}
		return "running"
	case statePaused:
		return "paused"
	case stateClosed:
		return "completed"
	case stateWithdrawn:
		return "withdrawn"
	}
	return r.state // unknown: shown as written, flagged by the classifier
}

// chat: a conversation of the chat tier, neither a job, a dispatched
// worker nor an escalation.
func chat(r *row) bool {
	return r.typ != typeJob && r.typ != typeDispatch && r.typ != typeProxy
}

func live(state string) bool { return state == stateActive || state == statePending }

func fields(r *row, phase, pausedBy string) []model.Field {
	f := []model.Field{
		{Name: "conversation", Value: r.id},
		{Name: "type", Value: r.typ},
		{Name: "state", Value: r.state},
		{Name: "bus", Value: r.bus.path},
	}
	add := func(name, value string) {
		if value != "" {
			f = append(f, model.Field{Name: name, Value: value})
		}
	}
	add("parent", r.parent)
	add("request", r.requestID)
	add("project", r.project)
	if r.awaitingInput {
		add("awaiting_input", "1")
	}
	add("pid_recorded_in", r.pidFrom)
	add("phase", phase)
	add("paused_by", pausedBy)
	return f
}

// storeID is the row's id relative to the store: the bus's dir relative to
// the root, then the conversation id.
func storeID(l layout, r *row) string {
	rel, err := filepath.Rel(l.root, filepath.Dir(r.bus.path))
	if err != nil || rel == "." {
		return r.id
	}
	return path.Join(filepath.ToSlash(rel), r.id)
}

// qualifier is what follows a conversation id's prefix ("dispatch:ab12":
// "ab12"), the session id of a worker.
func qualifier(id string) string {
	if _, q, ok := strings.Cut(id, ":"); ok {
		return q
	}
	return ""
}

// sessionDir is where a dispatched worker's files live: the parent of its
// worktree when it has one (a same-repo dispatch: `<dispatcher>/tasks/<sid>`),
// else the chat tier's `<home>/<scope>/sessions/<sid>`; "" when neither
// exists (closed: its dir was removed).
func sessionDir(l layout, r *row) string {
	if r.worktree != "" {
		if dir := filepath.Dir(r.worktree); isDir(dir) {
			return dir
		}
		return ""
	}
	sid := qualifier(r.id)
	if l.home == "" || sid == "" || strings.ContainsAny(sid, `/\`) || sid == ".." {
		return ""
	}
	for _, scope := range subdirs(l.home) {
		if dir := filepath.Join(l.home, scope, sessionsDir, sid); isDir(dir) {
			return dir
		}
	}
	return ""
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

// epochSeconds converts TeaParty's REAL epoch seconds to a time.
func epochSeconds(s float64) time.Time {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return time.Time{}
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
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

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
