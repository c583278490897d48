package cli

import (
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

func TestStatePainterColoursEveryState(t *testing.T) {
	paint := statePainter()
	seen := map[string]model.State{}
	for _, s := range model.States {
		out := paint(s, "row")
		if !strings.Contains(out, "\x1b[") || !strings.Contains(out, "row") {
			t.Errorf("%s: %q has no colour", s, out)
		}
		if other, dup := seen[out]; dup {
			t.Errorf("%s and %s are painted alike", s, other)
		}
		seen[out] = s
	}
}
