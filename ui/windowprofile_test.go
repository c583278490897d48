package ui

import (
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
)

// windowProfile names a file for the CPU profile of a benchmark's measured
// window alone (go test's -cpuprofile covers the setup too, which dwarfs an
// idle window: generating and scanning the tree).
var windowProfile = flag.String("window.cpuprofile", "", "write the CPU profile of the measured window of the idle and touch benchmarks to this file")

// startWindowProfile starts that profile, sampled at 1 kHz (an idle window
// holds little CPU to sample); the function returned stops it.
func startWindowProfile(b *testing.B) func() {
	if *windowProfile == "" {
		return func() {}
	}
	f, err := os.Create(*windowProfile)
	if err != nil {
		b.Fatal(err)
	}
	runtime.SetCPUProfileRate(1000)
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		runtime.SetCPUProfileRate(0)
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}
