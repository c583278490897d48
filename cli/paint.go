package cli

import (
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// statePainter colours text-tree lines by state with ANSI basic colours,
// which every terminal maps to its own palette.
func statePainter() report.Painter {
	codes := map[model.State]string{
		model.StateRunning:  "32", // green
		model.StateDead:     "31", // red
		model.StateFinished: "34", // blue
		model.StateMissing:  "33", // yellow
	}
	return func(s model.State, text string) string {
		code, ok := codes[s]
		if !ok {
			return text
		}
		return "\x1b[" + code + "m" + text + "\x1b[0m"
	}
}
