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
//	classify_node.go  one node's own state: heartbeat, legacy, unstarted,
//	                  with the readings of SPEC §3 that its tables leave open
//	                  and the traits of a source's records (SPEC §10): no
//	                  process expected, never kill, a launch timeout, no
//	                  beat required
//	classify_tree.go  the tree pass: orphaned, conflict and cycle notes,
//	                  Recommend (merges itself), RetriesLeft
//	traits.go         ThresholdsFor (a node's own thresholds), a pid per
//	                  turn and its idle owner
//	identity.go       Verify, VerifyWithin (a late-stamped started), CheckStarted
//	probe.go          SystemProbe, CachingProbe, ProcessStarted
//	pins_linux.go     PinProcesses: a pidfd per followed process, in
//	                  one epoll set: the watcher's tick asks only about exits
//	reason.go         the one-line reasons, their beat age kept movable
//	classify_test.go  every row of the state, flag and recommended-action
//	                  tables of SPEC §3 as named cases, and the appendix
//	probe_test.go     the pid rules against real processes
//	traits_test.go    each trait, the idle flag (with real processes), a
//	                  node's own thresholds
package liveness
