package protocol

import (
	"fmt"
	"os"
	"strings"
)

// StillHolding keeps the holders whose descriptor still refers to target.
func StillHolding(holders []Holder, target os.FileInfo) []Holder {
	kept := holders[:0]
	for _, h := range holders {
		if h.Holds(target) {
			kept = append(kept, h)
		}
	}
	return kept
}

// HolderWords names the processes of holders for a message, each once:
// "pid 7 (agent --x)" or "pids 7 (agent), 9 (tee -a .children)".
func HolderWords(holders []Holder) string {
	var names []string
	seen := map[int]bool{}
	for _, h := range holders {
		if !seen[h.PID] {
			seen[h.PID] = true
			names = append(names, fmt.Sprintf("%d (%s)", h.PID, h.Command))
		}
	}
	if len(names) == 1 {
		return "pid " + names[0]
	}
	return "pids " + strings.Join(names, ", ")
}
