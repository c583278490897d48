package cli

import (
	"os"
	"runtime/debug"
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
