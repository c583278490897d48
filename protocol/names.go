package protocol

// The names of the on-disk contract (SPEC §1) and of what dispatchtop
// itself keeps beside it (SPEC §5). Every package that reads or writes
// these files names them from here.
const (
	// HeartbeatFile marks an infra dir: the node's pid, parent, role,
	// start and status, written whole; its mtime is the beat.
	HeartbeatFile = ".heartbeat"
	// HeartbeatTempFile is where a heartbeat is written before its rename
	// over HeartbeatFile; a watcher sees the rewrite arrive through it.
	HeartbeatTempFile = HeartbeatFile + TempSuffix
	// RunningFile is the legacy sentinel of old writers: a decimal pid.
	RunningFile = ".running"
	// RegistryFile is a parent's registry of its dispatches, one JSON
	// object a line, appended to without locking.
	RegistryFile = ".children"
	// CompactingFile is the registry a compaction replaced, kept until
	// every line appended to it is carried into RegistryFile (SPEC §5.3).
	CompactingFile = RegistryFile + ".compacting"
	// CarriedFile records how much of CompactingFile is in RegistryFile.
	CarriedFile = CompactingFile + ".carried"
	// carriedTemp is where CarriedFile is written before its rename.
	carriedTemp = CarriedFile + TempSuffix
	// CompactTempPrefix begins the name of a compaction's rewritten
	// registry (prefix, pid and time, then TempSuffix), so that a later
	// compaction can clear what a killed one left.
	CompactTempPrefix = RegistryFile + ".compact-"
	// CfaFile is the agent's work state.
	CfaFile = ".cfa-state.json"
	// RetryCountFile counts the resumes of a node, in all and per CfA
	// state; written by resume (SPEC §5.2).
	RetryCountFile = ".retry-count"
	// BlockedFile is the sentinel of an agent waiting for a human, in the
	// infra dir or in its MiddleDir.
	BlockedFile = "blocked.json"
	// AnswerFile is where an operator writes the answer to a blocked
	// agent: beside its BlockedFile. The agent reads it, then removes both.
	AnswerFile = "answer.md"
	// MiddleDir is where middle's agents keep their BlockedFile.
	MiddleDir = ".middle"
	// StreamSuffix ends the name of an event stream
	// (`.exec-stream.jsonl`, ...), whose mtime is the last activity.
	StreamSuffix = "-stream.jsonl"
	// ResumePendingFile is the marker of a resume in flight, created
	// exclusively so that two resumes dispatch once (SPEC §5.2).
	ResumePendingFile = ".resume-pending"
	// ResumeLogFile takes the output of the resume command.
	ResumeLogFile = ".resume.log"
	// WrapLogFile takes the output of a command run by wrap (capped), for
	// the dashboard's output tail.
	WrapLogFile = ".wrap.log"
	// MergedFile marks a node merged, so that merge is not offered again.
	MergedFile = ".merged"
	// MergeLogFile takes the output of the merge command.
	MergeLogFile = ".merge.log"
	// JournalDir holds the journal, in each root.
	JournalDir = ".dispatchtop"
	// JournalFile is the journal of every action, one JSON line each, in
	// JournalDir.
	JournalFile = "journal.jsonl"
	// TempSuffix ends the name a file is written under before its rename
	// over the file itself (see WriteFileAtomic).
	TempSuffix = ".tmp"
)

// The default roots, relative to the working directory, one for each
// layout SPEC §1 names; slash-separated.
const (
	SessionsRoot = ".sessions"
	JobsRoot     = ".teaparty/jobs"
)
