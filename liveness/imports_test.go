package liveness

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// probeFiles are the files of the process probe, the one part of liveness
// that asks the operating system (package doc): each is named with why.
var probeFiles = map[string]string{
	"probe.go":      "reads /proc/<pid>/stat for a create time and a parent, and gopsutil where that fails",
	"probe_unix.go": "signal 0 to tell a live pid from a gone one",
	"pins_linux.go": "a pidfd per followed process, in one epoll set",
	"boot.go":       "the boot a test build simulates, set before this process's own start",
}

// fileIOImports are the packages through which a file of liveness could
// read or write files, or ask the system anything.
var fileIOImports = []string{"os", "os/exec", "io/fs", "io/ioutil", "syscall", "golang.org/x/sys/unix"}

// liveness classifies from facts it is given: no file of it but the
// process probe imports a package that does file or system IO, so that the
// rules of SPEC §3 stay pure functions a table-driven test can check.
func TestOnlyTheProcessProbeDoesIO(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen[name] = true
		if _, probe := probeFiles[name]; probe {
			continue
		}
		// Every file, whatever its build constraints.
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(fileIOImports, path) {
				t.Errorf("%s imports %q: only the process probe (%s) may do IO", name, path, strings.Join(slices.Sorted(maps.Keys(probeFiles)), ", "))
			}
		}
	}
	for name := range probeFiles {
		if !seen[name] {
			t.Errorf("probe file %s does not exist: keep the list of probe files current", name)
		}
	}
}
