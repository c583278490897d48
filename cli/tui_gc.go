package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// dashboardGCPercent is the dashboard's collector pacing (GOGC): the heap
// grows by half its live size, not by all of it, before the next
// collection. At 10,000 nodes the live heap is some 35 MB, and with the
// default pacing the heap reached twice that and RSS with it past SPEC §8's
// 100 MiB. A percentage scales with the tree: at 100,000 nodes it is a
// collection per half a live heap allocated, never one after another as a
// fixed limit below the live heap would be. An idle dashboard allocates a
// forest's copy per reasons' refresh, so the collections it adds are one a
// minute or so.
const dashboardGCPercent = 50

// paceDashboardCollection sets the dashboard's pacing, unless GOGC or
// GOMEMLIMIT in the environment says how to collect. The func returned puts
// the setting back (a run in a test's process).
func paceDashboardCollection() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(dashboardGCPercent)
	return func() { debug.SetGCPercent(percent) }
}

// collectReleasedForests is the dashboard ui's Released: a collection each
// time the ui has let go of a forest that a newer one mostly renewed; nil
// when GOGC or GOMEMLIMIT in the environment says how to collect.
//
// A collection paces the next by the heap it finds live. One that falls
// while a renewed forest is being built, the previous one still shown (or
// ends after, having marked both), finds two forests live, and the heap
// then grows by half of both before the next: at 100,000 nodes, a fleet
// crossing a threshold in the same second took the dashboard past SPEC
// §8's 300 MiB that way. Collected once the old forest is garbage, the
// heap is paced by one forest again, and an idle fleet's next renewal
// fits in the headroom. A renewal that lets go of a forest is a fleet's
// transition, a rebuilt forest, or the refresh of the ages reasons quote
// as text (when most sessions quote one): the copy
// each of them makes set off a collection of its own about as often
// before. A collection still running takes the next one's place.
func collectReleasedForests(getenv func(string) string) func() {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	var running atomic.Bool
	return func() {
		if !running.CompareAndSwap(false, true) {
			return
		}
		defer running.Store(false)
		runtime.GC()
	}
}
