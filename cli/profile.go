package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file the process writes its CPU profile to, from
// its start to its end: what `make bench-sources-live -cpuprofile` reads
// to say where a live source's cost lies, in the real binary under real
// writers. Not a flag: it is for measuring, not for users.
const cpuProfileEnv = "DISPATCHTOP_CPUPROFILE"

// startCPUProfile starts the profile $DISPATCHTOP_CPUPROFILE asks for and
// returns what stops it; a profile that cannot start is said on stderr
// and the process runs on.
func startCPUProfile(stderr io.Writer) func() {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "dispatchtop: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "dispatchtop: %s %s: %v\n", cpuProfileEnv, path, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
