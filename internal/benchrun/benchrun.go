// Package benchrun is what the commands that measure the binary from
// outside (benchcompare, benchdash) share: the binary to run, and a
// generated tree in a temporary directory.
package benchrun

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

// Run is what a measuring command starts from.
type Run struct {
	Bin  string        // the binary, absolute: the commands run it from other directories
	Dir  string        // a new temporary directory: Remove removes it
	Root string        // the generated tree, Dir/.sessions
	Took time.Duration // the tree's generation
}

// Remove removes the run's directory, the tree with it.
func (r Run) Remove() { os.RemoveAll(r.Dir) }

// Prepare checks that bin exists and generates sessions × perSession
// nodes, depth levels a session, as treegen does, in .sessions of a new
// temporary directory named after prefix; the heartbeats name this
// process.
func Prepare(bin, prefix string, sessions, perSession, depth int) (Run, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return Run{}, fmt.Errorf("binary %s: %w", bin, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return Run{}, fmt.Errorf("binary %s: %w (build it first)", bin, err)
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return Run{}, fmt.Errorf("temporary directory: %w", err)
	}
	r := Run{Bin: abs, Dir: dir, Root: filepath.Join(dir, ".sessions")}
	started := time.Now()
	if err := treegen.Generate(r.Root, sessions, perSession, depth, started); err != nil {
		r.Remove()
		return Run{}, err
	}
	r.Took = time.Since(started)
	return r, nil
}
