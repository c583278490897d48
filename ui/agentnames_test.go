package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// sourcesSnapshot is a node of each system as its reader hands it over:
// ids that are a uuid or a row id, the name in the source's own fields.
func sourcesSnapshot() *model.Snapshot {
	specs := []spec{
		{id: "team-7", role: "leader", team: "docs", state: model.StateRunning, pid: 700},
		{id: "team-7/agents/0e4b1c2a-a5a5-4d31-aa8b-b72fa757f850", role: "worker", team: "docs", state: model.StateDead, action: model.ActionResume, reason: "pane gone", pid: 701},
		{id: "job-103", role: "project-lead", state: model.StateRunning, pid: 710},
		{id: "job-103/dispatch:829a5cd4428e", role: "pro-developer", team: "project-x", state: model.StateRunning, pid: 711},
		{id: "acme/api/wf_01hzy3k2q9", role: "implementation", team: "acme/api", state: model.StateRunning, pid: 720},
		{id: "room-1/daemon", role: "daemon", state: model.StateRunning, pid: 730},
		{id: "room-1/daemon/room-1:builder", role: "builder", team: "room-1", state: model.StateRunning, pid: 731},
	}
	snap := buildSnapshot("/srv/stores", clock12, specs)
	set := func(id string, kind sources.Kind, fields ...model.Field) {
		n := snap.ByID[id]
		n.Source = string(kind)
		n.EditRare(func(r *model.Rare) { r.SourceFields = fields })
	}
	set("team-7", sources.OpencodeTeams, model.Field{Name: "leader", Value: "lead-1"})
	set("team-7/agents/0e4b1c2a-a5a5-4d31-aa8b-b72fa757f850", sources.OpencodeTeams,
		model.Field{Name: "name", Value: "oc-scribe"}, model.Field{Name: "status", Value: "inactive"},
		model.Field{Name: "last error", Value: "pane %3 gone"}, model.Field{Name: "tmux pane", Value: "%3"})
	set("job-103", sources.TeaParty, model.Field{Name: "state", Value: "active"})
	set("job-103/dispatch:829a5cd4428e", sources.TeaParty, model.Field{Name: "state", Value: "active"})
	set("acme/api/wf_01hzy3k2q9", sources.Middle, model.Field{Name: "repo", Value: "acme/api"},
		model.Field{Name: "state", Value: "running"}, model.Field{Name: "epic", Value: "42"}, model.Field{Name: "end_reason", Value: "-"})
	set("room-1/daemon", sources.Chatroom)
	set("room-1/daemon/room-1:builder", sources.Chatroom, model.Field{Name: "role", Value: "builder"}, model.Field{Name: "harness", Value: "claude"})
	return snap
}

// SPEC §6 Tree: every node shows its agent's own name (opencode-teams
// `name`, TeaParty `agent_name`, middle's epic, chatroom's role, the
// native role), kept when the row is cut; `/` finds it; the details show
// the source's own fields in a section of their own.
func TestNodesShowTheirAgentsName(t *testing.T) {
	names := map[string]string{
		"team-7/agents/0e4b1c2a-a5a5-4d31-aa8b-b72fa757f850": "oc-scribe",
		"job-103/dispatch:829a5cd4428e":                      "pro-developer",
		"acme/api/wf_01hzy3k2q9":                             "epic 42",
		"room-1/daemon/room-1:builder":                       "builder",
	}
	for _, sz := range operatorSizes {
		t.Run(sz.name, func(t *testing.T) {
			m := newTestModel(t, sz.w, sz.h, Options{Initial: sourcesSnapshot()})
			frame := m.View().Content
			checkFrame(t, frame, sz.w, sz.h)
			golden.RequireEqual(t, ansi.Strip(frame))
			for id, name := range names {
				line := rowLine(m, id)
				if cell := ansi.Cut(line, 0, markWidth+m.columns(sz.w).width("NODE")); !strings.Contains(cell, name) {
					t.Errorf("%s: NODE cell %q lacks the name %q", id, cell, name)
				}
			}
		})
	}
	for _, q := range []string{"oc-scribe", "name:oc-scribe", "name:scribe,nobody"} {
		m := newTestModel(t, 120, 40, Options{Initial: sourcesSnapshot()})
		m.setFilter(q)
		var matched []string
		for _, r := range m.rows {
			if r.match {
				matched = append(matched, r.node.ID)
			}
		}
		if len(matched) != 1 || !strings.HasSuffix(matched[0], "b72fa757f850") {
			t.Errorf("/%s matches %v, want the opencode-teams agent alone", q, matched)
		}
	}
	m := newTestModel(t, 120, 40, Options{Initial: sourcesSnapshot()})
	m.moveTo(m.rowIndex("team-7/agents/0e4b1c2a-a5a5-4d31-aa8b-b72fa757f850"))
	press(m, "enter")
	details := strings.Join(m.detailLines(m.selectedNode()), "\n")
	for _, want := range []string{`\nname +oc-scribe\n`, `\n── opencode-teams`, `\n  last error +pane %3 gone\n`, `\n  tmux pane +%3\n`, `\n  status +inactive\n`} {
		if !regexp.MustCompile(want).MatchString(details) {
			t.Errorf("the details lack %q:\n%s", want, details)
		}
	}
}
