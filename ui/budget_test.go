package ui

import (
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/scanner"
)

// SPEC §8 "a heartbeat touch in that tree → on screen ≤ 60 ms after the
// write, the debounce included": the worst touch is one right after
// another update, which the watcher holds for its debounce; the model then
// takes it in (BenchmarkTouchToFrame10k: ~6 ms at 10,000 nodes, budgeted
// here at 10) and the renderer draws it at its next frame, at most a frame
// period later. Those three bounds must fit in the budget.
func TestTouchToScreenWorstCaseFitsTheBudget(t *testing.T) {
	const budget, model = 60 * time.Millisecond, 10 * time.Millisecond
	frame := time.Second / MaxFPS
	if worst := scanner.DefaultDebounce + model + frame; worst > budget {
		t.Errorf("debounce %s + model %s + frame period %s (MaxFPS %d) = %s, over the %s budget",
			scanner.DefaultDebounce, model, frame, MaxFPS, worst, budget)
	}
}
