package protocol

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// HoldersVisible: on Linux /proc shows which processes hold a file open.
const HoldersVisible = true

// Holder is one descriptor, open for writing, of one process.
type Holder struct {
	PID, FD int
	// Command is the process's command line, as far as it could be read.
	Command string
}

// fdPath is where /proc shows the descriptor.
func (h Holder) fdPath() string {
	return "/proc/" + strconv.Itoa(h.PID) + "/fd/" + strconv.Itoa(h.FD)
}

// maxCommand caps a command line quoted in a message.
const maxCommand = 120

// Holders lists the descriptors that hold target, a registry or the
// registry a compaction replaced, open for writing. It reads /proc: one
// readlink per descriptor of every process it may inspect, and a stat and a
// read of fdinfo only for those whose link names a registry. Processes it
// may not inspect (another user's, unless root) are not seen.
func Holders(target os.FileInfo) []Holder {
	procs, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := procs.Readdirnames(-1)
	procs.Close()
	var out []Holder
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		dir, err := os.Open("/proc/" + name + "/fd")
		if err != nil {
			continue // gone, or not ours to inspect
		}
		fds, _ := dir.Readdirnames(-1)
		dir.Close()
		var command string
		for _, f := range fds {
			fd, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			h := Holder{PID: pid, FD: fd}
			link, err := os.Readlink(h.fdPath())
			if err != nil {
				continue
			}
			// After the rename the link reads "<dir>/.children (deleted)".
			switch filepath.Base(strings.TrimSuffix(link, " (deleted)")) {
			case RegistryFile, CompactingFile:
			default:
				continue
			}
			if h.Holds(target) && h.writable() {
				if command == "" {
					command = commandOf(pid)
				}
				h.Command = command
				out = append(out, h)
			}
		}
	}
	return out
}

// Holds reports whether the descriptor (still) refers to target.
func (h Holder) Holds(target os.FileInfo) bool {
	st, err := os.Stat(h.fdPath())
	return err == nil && os.SameFile(st, target)
}

// writable reports whether the descriptor was opened for writing; when its
// flags cannot be read it is taken to be.
func (h Holder) writable() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(h.PID) + "/fdinfo/" + strconv.Itoa(h.FD))
	if err != nil {
		return true
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("flags:")); ok {
			flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
			if err != nil {
				return true
			}
			return flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return true
}

// commandOf is pid's command line, its arguments joined by spaces and
// capped; its name (comm) when the command line is empty or unreadable.
func commandOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	cmd := strings.TrimSpace(string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
	if err != nil || cmd == "" {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		cmd = strings.TrimSpace(string(comm))
	}
	cmd = strings.Join(strings.Fields(cmd), " ") // one line, whatever the arguments hold
	if len(cmd) > maxCommand {
		cmd = cmd[:maxCommand] + "…"
	}
	if cmd == "" {
		cmd = "?"
	}
	return cmd
}
