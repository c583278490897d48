package ui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/model"
)

// SPEC §6 Filter: words match the id, role, team, task, state and flag
// words — never the reason's prose; field:value terms match one field
// exactly; every term must match (AND).
func TestFilterGrammar(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		want    []string // ids that match themselves (not ancestors kept for context)
		wantErr string
	}{
		{name: "a word matches the state word", query: "dead",
			want: []string{"A/code/2", "B", "B/test/2"}},
		{name: "a word does not match the reason's prose", query: "gone",
			want: nil},
		{name: "a word matches a flag word", query: "orphaned",
			want: []string{"B/code/1"}},
		{name: "a word matches the start of a flag word", query: "kill_cand",
			want: []string{"A/test/3"}},
		{name: "a word matches the role", query: "asker",
			want: []string{"B/ask/3"}},
		{name: "a word matches the team, any case", query: "DOCS",
			want: []string{"A/docs/4"}},
		{name: "a word matches within the id", query: "test/",
			want: []string{"A/test/3", "B/test/2"}},
		{name: "state: matches the state alone", query: "state:running",
			want: []string{"A", "A/test/3", "B/ask/3", "B/code/1", "C"}},
		{name: "flag: matches a flag", query: "flag:blocked",
			want: []string{"B/ask/3"}},
		{name: "action: matches the action", query: "action:kill",
			want: []string{"A/test/3"}},
		{name: "terms AND", query: "state:dead team:code",
			want: []string{"A/code/2"}},
		{name: "a word and a term AND", query: "B flag:orphaned",
			want: []string{"B/code/1"}},
		{name: "role: and id: match within the field", query: "role:test id:A/",
			want: []string{"A/test/3"}},
		{name: "spaces around terms are ignored", query: "  state:dead   ",
			want: []string{"A/code/2", "B", "B/test/2"}},
		{name: "a comma gives alternatives (OR)", query: "state:dead,missing",
			want: []string{"A/code/2", "A/docs/4", "B", "B/test/2"}},
		{name: "a minus negates a term", query: "state:dead -team:code",
			want: []string{"B", "B/test/2"}},
		{name: "a minus negates alternatives: none of them", query: "-state:running,dead",
			want: []string{"A/docs/4", "A/plan/1"}},
		{name: "a bare word takes alternatives and a minus", query: "orph,asker -flag:blocked",
			want: []string{"B/code/1"}},
		{name: "an unknown alternative is an error", query: "state:dead,zombie",
			wantErr: `filter: no state "zombie"`},
		{name: "a minus alone is an error", query: "-",
			wantErr: `filter: "-" needs a term`},
		{name: "an empty alternative is an error", query: "state:dead,",
			wantErr: `filter: "state:dead," has an empty alternative`},
		{name: "an unknown field is an error", query: "colour:red",
			wantErr: `filter: unknown field "colour" (id, name, role, team, state, flag, action)`},
		{name: "an unknown state is an error", query: "state:zombie",
			wantErr: `filter: no state "zombie" (running, dead, finished, missing)`},
		{name: "an unknown flag is an error", query: "flag:sleepy",
			wantErr: `filter: no flag "sleepy"`},
		{name: "an empty value is an error", query: "state:",
			wantErr: `filter: "state:" needs a value`},
	}
	snap := exampleSnapshot()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := parseQuery(tt.query)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse %q: %v", tt.query, err)
			}
			var got []string
			for _, s := range snap.Sessions {
				s.Walk(func(n *model.Node) {
					if q.match(n) {
						got = append(got, n.ID)
					}
				})
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("%q matches %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

// SPEC §6 Filter: the prompt is a text input: ctrl+w deletes a word, a
// paste goes in whole, and up/down recall the filters kept earlier in the run.
func TestFilterPrompt(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string // the filter after the keys
	}{
		{name: "typing builds the filter", keys: []string{"/", "d", "e", "a", "d"}, want: "dead"},
		{name: "ctrl+w deletes the last word", keys: []string{"/", "t", "e", "a", "m", ":", "c", "space", "d", "e", "a", "d", "ctrl+w"}, want: "team:c "},
		{name: "up recalls the last kept filter", keys: []string{"/", "d", "e", "a", "d", "enter", "/", "ctrl+u", "up"}, want: "dead"},
		{name: "up twice recalls the one before", keys: []string{"/", "a", "enter", "/", "ctrl+u", "b", "enter", "/", "ctrl+u", "up", "up"}, want: "a"},
		{name: "down comes back to what was typed", keys: []string{"/", "a", "enter", "/", "ctrl+u", "x", "up", "down"}, want: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, 80, 24, Options{})
			for _, k := range tt.keys {
				press(m, k)
			}
			if m.textFilter != tt.want {
				t.Errorf("filter %q, want %q", m.textFilter, tt.want)
			}
		})
	}
	t.Run("a paste goes in whole", func(t *testing.T) {
		m := newTestModel(t, 80, 24, Options{})
		press(m, "/")
		m.Update(tea.PasteMsg{Content: "state:dead"})
		if m.textFilter != "state:dead" || len(m.rows) != 4 {
			t.Errorf("filter %q, %d rows; want state:dead and 4 rows (A for context)", m.textFilter, len(m.rows))
		}
	})
}

// SPEC §6 Filter: enter keeps the filter and esc clears it; the prompt's
// key line says so first, so an 80-column screen does not cut them off.
func TestFilterPromptHintKeepsEnterAndEsc(t *testing.T) {
	m := newTestModel(t, 80, 24, Options{})
	press(m, "/")
	lines := strings.Split(stripped(m), "\n")
	hint := lines[len(lines)-1]
	for _, want := range []string{"enter keep", "esc clear"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the prompt's key line lacks %q: %q", want, hint)
		}
	}
}

// The README's filter example shows something on the demo's fleet.
func TestReadmeFilterExampleMatchesTheDemo(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ex := regexp.MustCompile("`/` filters\\s+\\(`([^`]+)`").FindSubmatch(readme)
	if ex == nil {
		t.Fatal("the README gives no filter example after \"`/` filters\"")
	}
	q, err := parseQuery(string(ex[1]))
	if err != nil {
		t.Fatalf("the README's filter %q: %v", ex[1], err)
	}
	matched := 0
	for _, n := range demoSnapshot().Nodes() {
		if q.match(n) {
			matched++
		}
	}
	if matched == 0 {
		t.Errorf("the README's filter %q matches no node of the demo", ex[1])
	}
}
