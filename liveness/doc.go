// Package liveness classifies nodes: facts read from disk, process probe
// results, the current time and the thresholds go in; state, flags, reason
// and recommended action come out (SPEC §3). It does no file IO of its own;
// the process probe is an interface with a gopsutil implementation. It also
// owns the heartbeat writer that `wrap` and the demo use.
package liveness
