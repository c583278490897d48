package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/dispatchtop/dispatchtop"

// layerRow is one row of docs/architecture.md's layer table.
type layerRow struct {
	layer   int
	imports []string // of ours, relative to the module
}

// The layer table of docs/architecture.md (under "## The arrows") is what
// `go list` says: every package of the module has a row, each row's
// "imports of ours" are its imports, and each of them is of a lower layer.
// A new package, a new import or one that runs up fails here.
func TestArchitectureLayerTableIsTheImports(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := parseLayerTable(string(doc))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := ourImports(string(out))
	checkLayers(t, table, listed)
}

// checkLayers reports every way table differs from listed or breaks the
// layering; it is the test's rule, apart from where the two come from.
func checkLayers(t testing.TB, table map[string]layerRow, listed map[string][]string) {
	t.Helper()
	for _, pkg := range slices.Sorted(maps.Keys(listed)) {
		row, ok := table[pkg]
		if !ok {
			t.Errorf("package %s has no row in the layer table (imports %v)", name(pkg), listed[pkg])
			continue
		}
		if want := listed[pkg]; !slices.Equal(row.imports, want) {
			t.Errorf("%s: the table says it imports %v, go list says %v", name(pkg), row.imports, want)
		}
		for _, imp := range listed[pkg] {
			if dep, ok := table[imp]; ok && dep.layer >= row.layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import runs down only", name(pkg), row.layer, imp, dep.layer)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(table)) {
		if _, ok := listed[pkg]; !ok {
			t.Errorf("the layer table names %s, which is no package of the module", name(pkg))
		}
	}
}

func name(pkg string) string {
	if pkg == "" {
		return "(the module root)"
	}
	return pkg
}

// ourImports reads `go list -f '{{.ImportPath}} {{join .Imports " "}}'`:
// each package, relative to the module ("" the root), and its imports of
// the module, sorted.
func ourImports(out string) map[string][]string {
	rel := func(p string) (string, bool) {
		if p == modulePath {
			return "", true
		}
		r, ok := strings.CutPrefix(p, modulePath+"/")
		return r, ok
	}
	m := map[string][]string{}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg, _ := rel(f[0])
		imports := []string{}
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				imports = append(imports, r)
			}
		}
		slices.Sort(imports)
		m[pkg] = imports
	}
	return m
}

// parseLayerTable reads the table that follows "## The arrows": rows of
// `| layer | package | imports of ours | ... |`, a package and each import
// in backticks ("—" for none, "(the module root)" for main.go's).
func parseLayerTable(doc string) (map[string]layerRow, error) {
	_, after, ok := strings.Cut(doc, "## The arrows")
	if !ok {
		return nil, fmt.Errorf("no section \"## The arrows\"")
	}
	_, after, ok = strings.Cut(after, "| layer | package | imports of ours |")
	if !ok {
		return nil, fmt.Errorf("no table headed | layer | package | imports of ours |")
	}
	table := map[string]layerRow{}
	for i, line := range strings.Split(after, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			return nil, fmt.Errorf("row %d: %d cells, want at least 3: %q", i+1, len(cells), line)
		}
		layer, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil {
			return nil, fmt.Errorf("row %d: layer %q: %w", i+1, cells[0], err)
		}
		pkg := ""
		if c := strings.TrimSpace(cells[1]); c != "(the module root)" {
			pkg = strings.Trim(c, "`")
		}
		if _, dup := table[pkg]; dup {
			return nil, fmt.Errorf("row %d: %s has two rows", i+1, name(pkg))
		}
		imports := []string{}
		if c := strings.TrimSpace(cells[2]); c != "—" {
			for _, imp := range strings.Split(c, ",") {
				imports = append(imports, strings.Trim(strings.TrimSpace(imp), "`"))
			}
		}
		slices.Sort(imports)
		table[pkg] = layerRow{layer: layer, imports: imports}
	}
	if len(table) == 0 {
		return nil, fmt.Errorf("the layer table has no rows")
	}
	return table, nil
}

// recorder is a testing.TB that keeps what checkLayers reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// The check fails for each way a table can be wrong: a package without a
// row, an import the table lacks, an import of a higher or the same layer,
// a row for no package; and passes a table that is right.
func TestLayerCheckFailsOnEachKindOfDrift(t *testing.T) {
	listed := map[string][]string{"model": {}, "protocol": {"model"}, "cli": {"model", "protocol"}}
	right := map[string]layerRow{"model": {0, []string{}}, "protocol": {1, []string{"model"}}, "cli": {6, []string{"model", "protocol"}}}
	for _, tc := range []struct {
		name  string
		edit  func(m map[string]layerRow)
		wants string
	}{
		{"right", func(map[string]layerRow) {}, ""},
		{"a package without a row", func(m map[string]layerRow) { delete(m, "cli") }, "cli has no row"},
		{"an import the table lacks", func(m map[string]layerRow) { m["cli"] = layerRow{6, []string{"model"}} }, "the table says it imports [model], go list says [model protocol]"},
		{"an import upwards", func(m map[string]layerRow) { m["model"] = layerRow{2, []string{}} }, "protocol (layer 1) imports model (layer 2)"},
		{"an import within a layer", func(m map[string]layerRow) { m["protocol"] = layerRow{0, []string{"model"}} }, "protocol (layer 0) imports model (layer 0)"},
		{"a row for no package", func(m map[string]layerRow) { m["gone"] = layerRow{3, []string{}} }, "names gone, which is no package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := maps.Clone(right)
			tc.edit(table)
			r := &recorder{TB: t}
			checkLayers(r, table, listed)
			if tc.wants == "" && len(r.errs) > 0 || tc.wants != "" && !slices.ContainsFunc(r.errs, func(e string) bool { return strings.Contains(e, tc.wants) }) {
				t.Errorf("reported %q, want one that says %q", r.errs, tc.wants)
			}
		})
	}
}
