// Package liveness classifies nodes: facts read from disk, process probe
// results, the current time and the thresholds go in; state, flags, reason
// and recommended action come out (SPEC §3). It does no file IO of its own;
// the process probe is an interface with a gopsutil implementation, which
// the Linux process pins wrap (imports_test.go holds it to that).
//
// Where things are:
//
//	classify.go       ClassifyForest, ClassifyNode, BeatEdges and NodeEdges
//	                  (the ages past which a node changes), ClockSkew
//	verdict.go        the state and flag tables of SPEC §3 for a node with
//	                  a heartbeat, rule by rule over its facts: the verdict
//	                  (state, flags, the row that decided), no probe, no
//	                  clock, no words; with the readings of SPEC §3.1 and
//	                  the traits of a source's records (SPEC §10)
//	classify_node.go  one node's own classification: a heartbeat's facts
//	                  gathered (the probe asked only when the pid decides),
//	                  judged, worded; legacy and unstarted nodes
//	reason_beat.go    the words of a heartbeat's verdict, row by row
//	classify_tree.go  the tree pass: orphaned, conflict and cycle notes,
//	                  Recommend (merges itself), RetriesLeft
//	traits.go         ThresholdsFor (a node's own thresholds), a per-turn
//	                  pid's owner
//	identity.go       Verify, VerifyWithin (a late-stamped started), CheckStarted
//	probe.go          SystemProbe, CachingProbe, ProcessStarted
//	pins_linux.go     PinProcesses: a pidfd per followed process, in
//	                  one epoll set: the watcher's tick asks only about exits
//	reason.go         the one-line reasons, their beat age kept movable
//	intern.go         the reasons' texts and the flags' lists that nodes
//	                  reading the same share (SPEC §8 memory): speed only
//	verdict_test.go   the state and flag tables row by row against the
//	                  verdict alone
//	classify_test.go  every row of the state, flag and recommended-action
//	                  tables of SPEC §3 as named cases, and the appendix
//	probe_test.go     the pid rules against real processes
//	traits_test.go    each trait, the idle flag (with real processes), a
//	                  node's own thresholds
package liveness
