package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dispatchtop/dispatchtop/demo"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/model"
)

// schemaPath is the published JSON Schema of the --once --json document.
var schemaPath = filepath.Join("docs", "schema", "dispatchtop-v1.json")

// compileSchema compiles docs/schema/dispatchtop-v1.json, formats asserted.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaPath, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatalf("compile %s: %v", schemaPath, err)
	}
	return sch
}

// validateDocument checks one --once --json output against the schema.
func validateDocument(t *testing.T, sch *jsonschema.Schema, out []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("--once --json is not JSON: %v\n%s", err, out)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("--once --json does not match %s:\n%v", schemaPath, err)
	}
}

// onceJSON runs the binary's --once --json on roots.
func onceJSON(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	stdout, stderr, code := run(t, dir, append([]string{"--once", "--json", "--fail-on", "none"}, args...)...)
	if code != 0 {
		t.Fatalf("--once --json: exit %d: %s", code, stderr)
	}
	return []byte(stdout)
}

// SPEC §4.1: the document --once --json prints for the fixture trees (every
// state, flag and action of SPEC §3, both layouts) is what the published
// schema describes, field for field: the schema's objects are closed, so a
// field written but not described fails here.
func TestOnceJSONOfTheFixturesMatchesTheSchema(t *testing.T) {
	sch := compileSchema(t)
	fx := treegen.InstallFixture(t, t.TempDir())
	addUnknownHeartbeatField(t, filepath.Join(fx.Dir, ".sessions", "A", ".heartbeat"))
	out := onceJSON(t, fx.Dir, filepath.Join(fx.Dir, ".sessions"), filepath.Join(fx.Dir, ".teaparty", "jobs"))
	validateDocument(t, sch, out)

	// The fixture reaches what the schema constrains: nullable fields both
	// ways, the optional ones present.
	for _, want := range []string{`"cfa": null`, `"outcome": "success"`, `"blocked": "`, `"other_parents": [`, `"extra": {`, `"problems": [`, `"heartbeat": null`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the fixture's document lacks %s: the schema is not exercised there", want)
		}
	}
}

// addUnknownHeartbeatField gives the installed heartbeat at path a field
// dispatchtop does not know (it goes under "extra"), keeping its mtime.
func addUnknownHeartbeatField(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var hb map[string]any
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &hb); err != nil {
		t.Fatal(err)
	}
	hb["model"] = map[string]any{"name": "planner", "tokens": 1200}
	raw, _ = json.Marshal(hb)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// Documents the schema must refuse: it is not a schema that accepts
// anything.
func TestSchemaRefusesWhatTheContractDoesNot(t *testing.T) {
	sch := compileSchema(t)
	fx := treegen.InstallFixture(t, t.TempDir())
	var doc map[string]any
	if err := json.Unmarshal(onceJSON(t, fx.Dir, filepath.Join(fx.Dir, ".sessions")), &doc); err != nil {
		t.Fatal(err)
	}
	firstNode := func(d map[string]any) map[string]any { return d["sessions"].([]any)[0].(map[string]any) }
	tests := []struct {
		name   string
		change func(d map[string]any)
	}{
		{"another schema name", func(d map[string]any) { d["schema"] = "dispatchtop/v2" }},
		{"an unknown state", func(d map[string]any) { firstNode(d)["state"] = "zombie" }},
		{"an unknown flag", func(d map[string]any) { firstNode(d)["flags"] = []any{"sleepy"} }},
		{"a field the schema does not describe", func(d map[string]any) { firstNode(d)["colour"] = "red" }},
		{"a required field missing", func(d map[string]any) { delete(firstNode(d), "reason") }},
		{"a summary count missing", func(d map[string]any) { delete(d["summary"].(map[string]any), "dead") }},
		{"a time that is no date-time", func(d map[string]any) { d["generated_at"] = "yesterday" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(doc)
			var d map[string]any
			json.Unmarshal(b, &d)
			tt.change(d)
			b, _ = json.Marshal(d)
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err := sch.Validate(inst); err == nil {
				t.Error("the schema accepts it")
			}
		})
	}
	t.Run("a further summary count", func(t *testing.T) {
		b, _ := json.Marshal(doc)
		var d map[string]any
		json.Unmarshal(b, &d)
		d["summary"].(map[string]any)["quiet"] = 3
		b, _ = json.Marshal(d)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("the summary is closed: %v", err)
		}
	})
}

// The schema's states, flags and actions are the model's, every one: a
// flag added to the model must be added to the schema, even before a
// fixture shows it.
func TestSchemaVocabularyIsTheModels(t *testing.T) {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Enum []string `json:"enum"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	names := func(xs ...string) []string { return xs }
	var states, flags []string
	for _, st := range model.States {
		states = append(states, string(st))
	}
	for _, f := range model.Flags {
		flags = append(flags, string(f))
	}
	actions := names(string(model.ActionNone), string(model.ActionWait), string(model.ActionAnswer), string(model.ActionKill),
		string(model.ActionResume), string(model.ActionMerge), string(model.ActionSurface), string(model.ActionCompact))
	for def, want := range map[string][]string{"state": states, "flag": flags, "action": actions} {
		got := slices.Sorted(slices.Values(s.Defs[def].Enum))
		if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("$defs.%s enum %v, the model has %v", def, got, want)
		}
	}
}

// The demo fleet (real processes through wrap, both layouts, every state
// in its first minute) prints documents the schema describes too.
func TestOnceJSONOfTheDemoFleetMatchesTheSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo fleet")
	}
	sch := compileSchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := demo.Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	}()
	args := []string{"--config", f.ConfigPath()}
	for _, r := range f.Roots() {
		args = append(args, "--root", r)
	}
	// A snapshot at the start and more while the scenario unfolds (crashes,
	// completions, a blocked agent), until one holds a dead and a blocked
	// node or 20 s have passed.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		out := onceJSON(t, f.Dir(), args...)
		validateDocument(t, sch, out)
		if t.Failed() || time.Now().After(deadline) ||
			bytes.Contains(out, []byte(`"state": "dead"`)) && bytes.Contains(out, []byte(`"blocked": "`)) {
			t.Logf("%d snapshots validated", i+1)
			return
		}
		time.Sleep(time.Second)
	}
}

// SPEC §4.1, §10: the document of the other sources' stores — each node
// with its source and the fields its source shows — is what the schema
// describes.
func TestOnceJSONOfTheSourceStoresMatchesTheSchema(t *testing.T) {
	sch := compileSchema(t)
	stores := []string{
		"chatroom:" + filepath.Join("testdata", "sources", "chatroom", "home", ".chatroom"),
		"opencode-teams:" + filepath.Join("testdata", "sources", "opencode-teams", "acme-api", ".opencode", "opencode-teams"),
	}
	for i, s := range stores {
		abs, err := filepath.Abs(s[strings.Index(s, ":")+1:])
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s[:strings.Index(s, ":")+1] + abs
	}
	out := onceJSON(t, t.TempDir(), stores...)
	validateDocument(t, sch, out)
	for _, want := range []string{`"source": "chatroom"`, `"source": "opencode-teams"`, `"source_fields": [`, `"name": "`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the stores' document lacks %s", want)
		}
	}
}
