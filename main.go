// Command dispatchtop is a terminal dashboard for live dispatch trees.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/dispatchtop/dispatchtop/cli"
)

// Profiling hooks, for measuring (docs/architecture.md, "Measuring"): left
// out of the flags and the man page, since no operator needs them.
const (
	envCPUProfile  = "DISPATCHTOP_CPUPROFILE"  // a CPU profile of the whole run, to this file
	envHeapProfile = "DISPATCHTOP_HEAPPROFILE" // the heap's live objects at exit, to this file
)

func main() {
	stop := profile(os.Getenv, os.Stderr)
	code := cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// profile starts the profiles the environment asks for and returns what
// writes them at exit; a profile it cannot write is said on stderr, and the
// command runs anyway.
func profile(getenv func(string) string, stderr *os.File) (stop func()) {
	var cpu *os.File
	if path := getenv(envCPUProfile); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "dispatchtop: %s=%s: %v\n", envCPUProfile, path, err)
		} else {
			cpu = f
		}
	}
	heap := getenv(envHeapProfile)
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if heap == "" {
			return
		}
		runtime.GC()
		f, err := os.Create(heap)
		if err == nil {
			err = pprof.WriteHeapProfile(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "dispatchtop: %s=%s: %v\n", envHeapProfile, heap, err)
		}
	}
}
