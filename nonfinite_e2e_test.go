package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/testproc"
	"github.com/dispatchtop/dispatchtop/sources/teaparty/teapartytest"
)

// A TeaParty row whose pid_started is +Inf (a valid SQLite REAL) is an
// unverified value, not an output error: --once --json prints the whole
// document, valid against the schema, the node's started null, its pid
// alive (unverified: never judged by it), and a problem naming the value.
func TestOnceJSONOfAnInfinitePidStartedIsTheWholeDocument(t *testing.T) {
	pid, _ := testproc.Live(t)
	h := teaPartyHome{t: t, home: filepath.Join(t.TempDir(), "webapp", ".teaparty")}
	bus, db := h.bus("jobs/job-20260507-101500--inf/messages.db")
	insertRows(t, db,
		teapartytest.Conversation{ID: "job:webapp:20260507-101500", Type: "job", CreatedAt: epoch(time.Now()), Agent: "webapp-lead", Slug: "webapp"},
		teapartytest.Conversation{ID: "dispatch:inf", Type: "dispatch", CreatedAt: epoch(time.Now().Add(-time.Minute)), Agent: "coding-agent",
			Parent: "job:webapp:20260507-101500", Slug: "webapp"})
	// Written as TeaParty's float() of an overflowing text would leave it.
	if _, err := db.Exec(`UPDATE conversations SET pid = ?, pid_started = 9e999 WHERE id = 'dispatch:inf'`, pid); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := run(t, t.TempDir(), "--once", "--json", "--fail-on", "none", "teaparty:"+h.home)
	if code != 0 || stdout == "" {
		t.Fatalf("--once --json: exit %d, %d bytes; stderr %s", code, len(stdout), stderr)
	}
	validateDocument(t, compileSchema(t), []byte(stdout))
	doc := onceDoc(t, "teaparty:"+h.home)
	n := doc.byKey[bus+"#dispatch:inf"]
	if n == nil {
		t.Fatalf("no node keyed %s#dispatch:inf", bus)
	}
	if n.Started != nil || n.PID == nil || *n.PID != pid || n.State != "running" {
		t.Errorf("started %v pid %v state %q: want null, %d, running", n.Started, n.PID, n.State, pid)
	}
	if !strings.Contains(stdout, "pid_started +Inf is not a number of seconds") {
		t.Errorf("no problem names the value:\n%s", stdout)
	}
}
