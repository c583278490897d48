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
	Bin  string        // the binary, absolute
	Dir  string        // a new temporary directory: Remove removes it
	Root string        // the generated tree, Dir/.sessions
	Took time.Duration // the tree's generation
}

// Remove removes the run's directory, the tree with it.
func (r Run) Remove() { os.RemoveAll(r.Dir) }

// Prepare checks the binary and generates the tree, as Binary and Tree do.
func Prepare(bin, prefix string, sessions, perSession, depth int) (Run, error) {
	abs, err := Binary(bin)
	if err != nil {
		return Run{}, err
	}
	dir, root, took, err := Tree(prefix, sessions, perSession, depth)
	if err != nil {
		return Run{}, err
	}
	return Run{Bin: abs, Dir: dir, Root: root, Took: took}, nil
}

// Binary is bin made absolute, once it is known to exist: the commands
// run it from other directories.
func Binary(bin string) (string, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", fmt.Errorf("binary %s: %w", bin, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("binary %s: %w (build it first)", bin, err)
	}
	return abs, nil
}

// Tree generates sessions × perSession nodes, depth levels a session, as
// treegen does, in .sessions of a new temporary directory named after
// prefix; its heartbeats name this process. It returns the directory
// (the caller removes it), the root and how long the generation took.
func Tree(prefix string, sessions, perSession, depth int) (dir, root string, took time.Duration, err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", 0, fmt.Errorf("temporary directory: %w", err)
	}
	root = filepath.Join(dir, ".sessions")
	started := time.Now()
	if err := treegen.Generate(root, sessions, perSession, depth, started); err != nil {
		os.RemoveAll(dir)
		return "", "", 0, err
	}
	return dir, root, time.Since(started), nil
}
