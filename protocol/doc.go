// Package protocol owns dispatchtop's on-disk contract (SPEC §1), once, for
// everything that reads or writes it:
//
//	names.go          every file name of the contract, and of what
//	                  dispatchtop keeps beside it
//	open*.go          the one way a file of the contract is opened:
//	                  never blocking, regular files only
//	read.go           ReadFile: a whole document, capped, opened that way
//	write.go          WriteFileAtomic: the one atomic write (temp file,
//	                  fsync, rename), taking turns with other writers
//	heartbeat.go      the heartbeat writer, for wrap and the demo
//	register.go       Register: a child's line in its parent's registry
//	parse.go          the parsers, pure and fuzzed: ParseHeartbeat,
//	                  ParseRegistry, ReadRegistry, ParseCfa,
//	                  ParseRetryCount, ParseBlocked, ParseLegacyPID,
//	                  ParseResumePending
//	jsonflat.go       the reader of small flat JSON objects their fast
//	                  paths share; anything unusual goes to encoding/json
//	handover.go,      the mechanics of a registry under compaction
//	recover.go, ...   (SPEC §5.3), shared by the recovery engine and the
//	                  scanner
//
// A compaction replaces `.children` by a rewritten copy. Appenders that
// opened the registry before the rename still write to the file it
// replaced, so that file is kept, as `.children.compacting` (a hard link
// made before the rename), until no process holds it open for writing and
// everything appended to it has been carried into `.children`. A record
// beside it, `.children.compacting.carried`, says how far it was carried.
// What a compaction killed half-way leaves is finished by the next run of
// any action or of a watcher that may write ([Recover]); meanwhile a reader
// sees `.children` followed by the lines not carried yet ([ReadView]), each
// line once.
package protocol
