package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/cli"
)

// specCitation is how code cites the contract: "SPEC §3", "SPEC §5.2".
var specCitation = regexp.MustCompile(`SPEC §([0-9]+(?:\.[0-9]+)*)`)

// specHeading is a numbered section of docs/spec.md: "## 3. Classification",
// "### 3.1 Readings of the tables".
var specHeading = regexp.MustCompile(`(?m)^#{2,4} ([0-9]+(?:\.[0-9]+)*)\.? `)

// The spec lives in the repo: every "SPEC §N" a Go file cites names a
// section that docs/spec.md has, so a reader who follows a citation finds
// the rule.
func TestEverySpecCitationNamesASectionOfDocsSpec(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("docs", "spec.md"))
	if err != nil {
		t.Fatalf("the contract must live in the repo: %v", err)
	}
	sections := map[string]bool{}
	for _, m := range specHeading.FindAllSubmatch(spec, -1) {
		sections[string(m[1])] = true
	}
	if len(sections) < 10 {
		t.Fatalf("docs/spec.md has %d numbered sections; its headings are not read right", len(sections))
	}

	cited := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, m := range specCitation.FindAllStringSubmatch(line, -1) {
				cited++
				if !sections[m[1]] {
					t.Errorf("%s:%d cites SPEC §%s, which docs/spec.md does not have", path, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no SPEC citation found: the walk did not reach the code")
	}
}

// usageFlag is a long flag in a usage or synopsis line.
var usageFlag = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// The synopsis of docs/spec.md §4 names every flag each command's usage
// line names: the contract does not lag the binary.
func TestSpecSynopsisNamesEveryFlagOfEachUsageLine(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("docs", "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	synopsis := map[string]string{}
	for _, line := range strings.Split(string(spec), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "dispatchtop" {
			synopsis[f[1]] += line
		}
	}
	checked := 0
	for _, cmd := range cli.Command().Commands() {
		if cmd.Hidden || !strings.Contains(cmd.Use, "--") {
			continue
		}
		line, ok := synopsis[cmd.Name()]
		if !ok {
			t.Errorf("docs/spec.md §4 has no synopsis line for %q", cmd.Name())
			continue
		}
		checked++
		for _, flag := range usageFlag.FindAllString(cmd.Use, -1) {
			if !regexp.MustCompile(regexp.QuoteMeta(flag) + `([^a-z0-9-]|$)`).MatchString(line) {
				t.Errorf("the synopsis of %s lacks %s, which its usage names: %q", cmd.Name(), flag, cmd.Use)
			}
		}
	}
	if checked < 6 {
		t.Fatalf("checked %d commands; the synopsis is not read right", checked)
	}
}
