package actions

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §4: an action's --json is its outcome as the journal records it.
// The engine hands every line it appends to EngineOptions.Journaled, as
// written, and Entry builds the same line for a result (the one a dry run
// would have written).
func TestEngineHandsOverTheLinesItJournals(t *testing.T) {
	root := t.TempDir()
	runningSelfNode(t, root)
	e := testEngine(root, model.Thresholds{}, Config{})
	var handed []JournalEntry
	e.opts.Journaled = func(j JournalEntry) { handed = append(handed, j) }

	dry := Request{Action: model.ActionResume, Node: "s", DryRun: true}
	res, err := e.Run(context.Background(), dry)
	if err != nil {
		t.Fatal(err)
	}
	if len(handed) != 0 {
		t.Fatalf("a dry run journals nothing, yet %d line(s) were handed over", len(handed))
	}
	if j := e.Entry(dry, res); j.Action != model.ActionResume || j.Node != "s" || j.Outcome != res.Outcome || j.Message != res.Message || j.User == "" || j.By == 0 {
		t.Fatalf("Entry of the dry run = %+v, want the result %+v as a journal line", j, res)
	}

	forced := Request{Action: model.ActionResume, Node: "s", Force: true}
	res, err = e.Run(context.Background(), forced)
	if err != nil || !res.Refused {
		t.Fatalf("resume of a running node: %v %+v, want a refusal", err, res)
	}
	written := journalFor(t, root, "s")
	if len(handed) != 1 || len(written) != 1 {
		t.Fatalf("handed %d line(s), journal holds %d: want the one refusal each", len(handed), len(written))
	}
	a, _ := json.Marshal(handed[0])
	b, _ := json.Marshal(written[0])
	if string(a) != string(b) {
		t.Fatalf("handed over %s\nthe journal holds %s", a, b)
	}
	entry := e.Entry(forced, res)
	entry.Time = written[0].Time
	if c, _ := json.Marshal(entry); string(c) != string(b) {
		t.Fatalf("Entry = %s\nthe journal holds %s", c, b)
	}
	if !written[0].Force {
		t.Fatalf("the forced resume's line does not say so: %s", b)
	}
}
