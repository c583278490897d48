// Package sources is the seam between the systems dispatchtop reads and the
// one classifier that judges them (SPEC §10). A source reads one kind of
// store — the native file protocol of SPEC §1, TeaParty's SQLite bus,
// middle's workflows table, opencode-teams' agent files, chatroom's machine
// state — and yields node facts: what the store says, in the shape of
// model.Node, never a state. The scanner builds the forest from the facts of
// every source and liveness classifies it; neither knows which system a node
// came from beyond what the facts say.
//
// The facts contract, for every source but the native one:
//
//   - Node.Source is the source's Kind; Node.ID is relative to the store
//     ("job-7--fix/dispatch:ab12"), '/'-separated; the scanner prefixes it
//     as it prefixes native ids when there are several roots.
//   - Node.HeartbeatPath is a key unique across every store of the host
//     (e.g. "/abs/messages.db#dispatch:ab12"); HasHeartbeat is true when the
//     record exists, and Heartbeat is synthesised from the record: PID and
//     Started (the process and its create time, 0 when unknown), Status in
//     the SPEC §1 vocabulary (starting, running, paused, completed,
//     withdrawn), Role, Team, TaskID, Worktree, and ParentHeartbeat, the key
//     of the parent's record, with HasParentField true ("" for a session
//     lead): edges are declared child-side, as native heartbeats declare them.
//   - BeatMtime is the newest sign of life the system itself counts (a beat
//     column, a stream's mtime, updated_at); ActivityMtime the newest
//     activity; Blocked the question a human must answer; Cfa the work state.
//   - InfraDir is where the node's files live (its worktree or job dir), ""
//     when it has none; actions refuse what needs one, and such a node is
//     never recommended resume or merge (SPEC §3).
//   - Node.SourceFields carry what the system says that the classifier does
//     not read (a row id, a tmux session, consecutive misses), in a fixed
//     order, for the detail pane, the JSON and the action placeholders.
//   - Node.Traits say how the source's liveness differs from a heartbeat's
//     (see model.Traits).
//
// A store that cannot be read (a missing table, an unknown schema, a
// corrupt or locked file) yields no nodes and a problem naming the file and
// the cause: never a crash, never a silent 0. Stores are opened read-only
// and never written; a database reader never blocks its writer.
package sources

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// Kind names a source; it is the KIND of a `KIND:PATH` root and the
// "source" of every node and root in the JSON.
type Kind string

// The sources dispatchtop knows.
const (
	Native        Kind = "native"
	TeaParty      Kind = "teaparty"
	Middle        Kind = "middle"
	OpencodeTeams Kind = "opencode-teams"
	Chatroom      Kind = "chatroom"
	// ClaudeCode is named here as well as by its reader (claudecode.Kind)
	// for the recovery engine, whose resume and answer rules name it and
	// which does not import a reader.
	ClaudeCode Kind = "claude"
)

// HistoryAfter is how long a record of a system that stores no pid (Codex
// CLI, OpenCode) must have been quiet, with no process of that system
// left, to be read as ended rather than dead: such stores keep every past
// conversation, which ended far more often than it crashed; a crash is
// caught while it is recent, as a dashboard or a CI job right after a run
// sees it.
const HistoryAfter = 30 * time.Minute

// Facts are what one read of a store found.
type Facts struct {
	Nodes    []*model.Node
	Problems []model.Problem
	// Changed, from a Rereader's Reread, are the positions in Nodes of the
	// nodes it put in place of the last facts' own, when the list kept its
	// length and its order: every other position holds the last facts'
	// node, the same pointer. The caller then looks at those alone, not at
	// every node. Nil: not known (a list assembled anew), compare them all;
	// empty: nothing changed.
	Changed []int
}

// Source reads one kind of store.
type Source interface {
	// Kind names the source.
	Kind() Kind
	// Detect reports whether path (a directory or file a ROOT names) holds
	// this source's store, by its layout (the names and places of its
	// files), not by whether it can be read: a store that cannot be is
	// Read's to report, naming the file and the cause.
	Detect(path string) bool
	// Read reads the whole store at path as of now.
	Read(path string, now time.Time) Facts
	// WatchPaths are the files and directories whose change means the store
	// must be read again (a database, its -wal, a directory of agent files).
	WatchPaths(path string) []string
	// Thresholds are the source's own defaults (what the system itself
	// counts as stale); flags and the config override them.
	Thresholds() model.Thresholds
}

// Rereader is a source whose store is made of units read apart (a bus, a
// database's rows past a watermark, a file): a read after a change reads
// again only the units the changed paths belong to, and keeps every other unit, its nodes
// too, from the last read. A database whose watch paths did not change is
// not queried.
type Rereader interface {
	Source
	// Reread reads the store at path as of now. kept is what the last
	// Reread of it returned (nil: none, a whole read); changed are the
	// watch paths whose signature moved since, and the files that moved in
	// a directory among them, each by its own path (an agent's file, a
	// job's lead's stream) (nil: not known, every unit is read again;
	// empty: none, nothing is read). A node of a unit that
	// was kept is the same pointer as in the last facts, which neither
	// side writes: the caller tells the nodes that changed by that. It
	// returns the facts of the whole store and what to keep for the next.
	Reread(path string, now time.Time, kept Kept, changed []string) (Facts, Kept)
}

// Kept is what a Rereader keeps between reads of one store; only the
// source that returned it reads it.
type Kept any

// Versioned is a source whose store can say that its content moved where
// a watch path's size, mtime and inode cannot. A SQLite database in WAL
// mode is the case: a commit writes its -wal (the event), syncs it, and
// only then marks the frames committed in the -shm, which no event
// announces; and a -wal restarted after a checkpoint is written over in
// place, its size unchanged, its mtime a clock tick coarse. A read woken
// by the -wal can so run before the commit is visible, and nothing would
// ever say it was missed.
type Versioned interface {
	Source
	// Version is the content version of the watch path p, read without
	// opening the store as a database (the zero Version for a path that
	// has none beyond its file signature).
	Version(p string) Version
}

// Version is what a Versioned source says of a watch path: Mark differs
// after every commit; Pending says the store holds a change being
// committed that a read cannot see yet (or a torn mark), so that the
// reader must look again, soon, without an event to wake it.
type Version struct {
	Mark    string
	Pending bool
}

// VersionOf is the Version src gives the watch path p, the zero Version
// when src is not Versioned.
func VersionOf(src Source, p string) Version {
	if v, ok := src.(Versioned); ok {
		return v.Version(p)
	}
	return Version{}
}

// NativeTree is a source whose store lies in a tree the file protocol of
// SPEC §1 is written in too: TeaParty's job leads beat through the
// `.heartbeat` of their job dirs, beside the bus that holds their workers.
// The scanner walks a root such a source reads with the native reader as
// well, as one root: one id prefix, one entry in the roots, the source's
// Kind. The records the file protocol reads there are the system's own, so
// they carry its traits whichever reader found them (NativeTraits).
type NativeTree interface {
	Source
	// HoldsNativeTree reports whether the directory path, a root this
	// source reads, is walked for infra dirs too.
	HoldsNativeTree(path string) bool
	// NativeTraits are the traits of every node the file protocol reads
	// in such a tree (a TeaParty job's lead: its pid a turn's, its work
	// merged by TeaParty itself).
	NativeTraits() model.Traits
}

// HoldsNativeTree reports whether src, reading its store at path, wants
// the file protocol to walk path too (see NativeTree).
func HoldsNativeTree(src Source, path string) bool {
	nt, ok := src.(NativeTree)
	return ok && nt.HoldsNativeTree(path)
}

// DirWatched is a source whose watch paths are directories alone (a store
// of files each written whole, by rename, in a directory it names): a file
// appearing in one is content, never a watch path, so the watcher asks for
// the watch paths again only when a directory appears in one, not at
// every write of a file (whose temp file is a new file at each write).
type DirWatched interface {
	Source
	// WatchesDirsOnly marks the source.
	WatchesDirsOnly()
}
