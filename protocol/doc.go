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
//	parse_*.go        the parsers, pure and fuzzed, a file a format:
//	                  parse_heartbeat.go (ParseHeartbeat),
//	                  parse_registry.go (ParseRegistry, ReadRegistry),
//	                  parse_cfa.go (ParseCfa, ParseCfaState),
//	                  parse_markers.go (ParseRetryCount, ParseBlocked,
//	                  ParseLegacyPID, ParseResumePending). Each JSON
//	                  format is one table of its fields (fields.go: the
//	                  key, the kind of value) and one function that keeps
//	                  what was read; its plain reading, encoding/json's,
//	                  is its definition
//	parse_fast.go     the fast reading of the three formats a scan reads
//	                  for every node (SPEC §8), by the same tables, through
//	jsonflat.go       a reader of small flat JSON objects; it gives up
//	                  anything unusual to the plain reading, and
//	                  parse_fast_test.go and the fuzz targets hold the two
//	                  equal
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
