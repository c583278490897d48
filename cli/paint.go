package cli

import (
	"charm.land/lipgloss/v2"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/themes"
)

// statePainter colours text-tree lines by state with the high-contrast
// palette: its ANSI indices follow the terminal's own colours, so the text
// reads on dark and light backgrounds alike.
func statePainter() report.Painter {
	th, _ := themes.Builtin(themes.HighContrast)
	styles := map[model.State]lipgloss.Style{
		model.StateRunning:  lipgloss.NewStyle().Foreground(lipgloss.Color(th.Running)),
		model.StateDead:     lipgloss.NewStyle().Foreground(lipgloss.Color(th.Dead)),
		model.StateFinished: lipgloss.NewStyle().Foreground(lipgloss.Color(th.Finished)),
		model.StateMissing:  lipgloss.NewStyle().Foreground(lipgloss.Color(th.Missing)),
	}
	return func(s model.State, text string) string {
		style, ok := styles[s]
		if !ok {
			return text
		}
		return style.Render(text)
	}
}
