// Package procowner finds the processes of a program that own a store,
// for the sources whose records name no pid (Codex CLI's threads, OpenCode's
// sessions): the store's owner is a process of that program whose
// environment points at the store's home, or that holds a file of the store
// open. It proves ownership or says it could not: a process of the program
// whose environment and files may not be read is counted, never guessed
// at, so a source never concludes "no owner" while one may be hiding.
//
// Only Linux's /proc is read; elsewhere every lookup is Unsupported, and a
// source judges its records by their own writes alone.
package procowner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Process is one process proven to own the store.
type Process struct {
	PID int
	// Comm is its command name, as /proc/<pid>/comm says.
	Comm string
}

// Lookup is what one look at the processes found.
type Lookup struct {
	// Owners are the processes proven to own the store.
	Owners []Process
	// Hidden are the processes of the program whose environment, cwd and
	// open files could not all be read (another user's): each might own
	// the store, so their presence makes "no owner" unprovable.
	Hidden []int
	// Unsupported: the processes could not be looked at (no /proc).
	Unsupported error
}

// Proven reports whether the lookup can say who owns the store, or that
// nobody does: nothing was hidden, and the processes could be listed.
func (l Lookup) Proven() bool { return l.Unsupported == nil && len(l.Hidden) == 0 }

// Spec says which processes are the program's and which of them own the store.
type Spec struct {
	// Names are the command names the program runs as (/proc/<pid>/comm,
	// or the base name of its executable).
	Names []string
	// Owns reports, from a process's environment, whether it points at
	// the store's home.
	Owns func(env map[string]string) bool
	// Files are the store's files: a process holding one open owns it.
	Files []string
}

// Find looks at every process under procDir ("" for /proc).
func Find(procDir string, spec Spec) Lookup {
	if procDir == "" {
		procDir = "/proc"
	}
	pids, err := listPIDs(procDir)
	if err != nil {
		return Lookup{Unsupported: fmt.Errorf("list processes in %s: %w", procDir, err)}
	}
	if _, err := os.Stat(filepath.Join(procDir, "self")); err != nil {
		return Lookup{Unsupported: fmt.Errorf("list processes in %s: %w", procDir, err)}
	}
	l, err := newLister(procDir)
	if err != nil {
		return Lookup{Unsupported: fmt.Errorf("list processes in %s: %w", procDir, err)}
	}
	defer l.close()
	self := os.Getpid()
	files := map[string]bool{}
	for _, f := range spec.Files {
		files[filepath.Clean(f)] = true
	}
	var out Lookup
	for _, name := range pids {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		comm, ok := l.programOf(name, spec.Names)
		if !ok {
			continue
		}
		owns, err := ownsStore(filepath.Join(procDir, name), spec, files)
		switch {
		case owns:
			out.Owners = append(out.Owners, Process{PID: pid, Comm: comm})
		case errors.Is(err, fs.ErrNotExist):
			// Exited while looked at: no owner.
		case err != nil:
			out.Hidden = append(out.Hidden, pid)
		}
	}
	return out
}

// listPIDs lists the names under procDir that are all digits: the
// processes, without a look at their type or an error made for each other
// name (self, sys, ...).
func listPIDs(procDir string) ([]string, error) {
	d, err := os.Open(procDir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := names[:0]
	for _, n := range names {
		if n != "" && strings.Trim(n, "0123456789") == "" {
			pids = append(pids, n)
		}
	}
	return pids, nil
}

// programOf reports whether the process whose /proc dir is dir runs as one
// of names, and the name it runs as: the name its comm says, else the one
// its executable has (a comm a process set itself). The executable's link
// is not read when the comm answers.
func programOf(dir string, names []string) (string, bool) {
	raw, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "", false
	}
	comm := strings.TrimSpace(string(raw))
	for _, n := range names {
		// comm is cut at 15 bytes.
		if comm == n || (len(n) > 15 && comm == n[:15]) {
			return n, true
		}
	}
	exe, _ := os.Readlink(filepath.Join(dir, "exe"))
	exe = strings.TrimSuffix(filepath.Base(exe), " (deleted)")
	for _, n := range names {
		if exe == n {
			return n, true
		}
	}
	return "", false
}

// ownsStore reports whether the process points at the store by its
// environment or holds one of its files open; an error when neither could
// be read.
func ownsStore(dir string, spec Spec, files map[string]bool) (bool, error) {
	env, envErr := readEnv(filepath.Join(dir, "environ"))
	if envErr == nil && spec.Owns != nil && spec.Owns(env) {
		return true, nil
	}
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
		if err == nil && files[filepath.Clean(target)] {
			return true, nil
		}
	}
	return false, envErr
}

func readEnv(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(raw), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// HoldsOpen reports whether the process pid holds path open (a thread's
// rollout): false when it does not or its files cannot be read.
func HoldsOpen(procDir string, pid int, path string) bool {
	if procDir == "" {
		procDir = "/proc"
	}
	dir := filepath.Join(procDir, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	want := filepath.Clean(path)
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == want {
			return true
		}
	}
	return false
}

// SameDir reports whether a and b name the same directory, as written or
// once resolved.
func SameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
