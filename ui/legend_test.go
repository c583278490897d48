package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/internal/glyph"
	"github.com/dispatchtop/dispatchtop/model"
)

// The README's legend explains every column and glyph the screen draws: a
// new flag, action or column without a line there fails here.
func TestReadmeLegendExplainsEveryGlyph(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	at := strings.Index(text, "### Legend")
	if at < 0 {
		t.Fatal("README.md has no Legend section")
	}
	legend := text[at:]
	if next := strings.Index(legend[1:], "\n## "); next >= 0 {
		legend = legend[:next+1]
	}
	var wants []string
	for _, s := range model.States {
		wants = append(wants, "`"+glyph.State(s)+"` "+string(s))
	}
	for _, f := range model.Flags {
		wants = append(wants, "`"+glyph.Flag(f)+"` "+string(f))
	}
	for _, a := range model.Actions {
		if a != model.ActionNone {
			wants = append(wants, "`"+glyph.Action(a)+"` "+string(a))
		}
	}
	for _, col := range []string{"NODE", "STATE", "ACTION", "BELOW", "BEAT", "PID", "CFA", "RT", "REASON"} {
		wants = append(wants, "| "+col+" |")
	}
	wants = append(wants, "`"+hostGlyph+"`", "`▾`", "`▸`", "`*`")
	for _, w := range wants {
		if !strings.Contains(legend, w) {
			t.Errorf("the README's legend does not explain %q", w)
		}
	}
}
