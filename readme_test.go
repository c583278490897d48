package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/cli"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's Usage block from dispatchtop --help")

// The README's usage block, between these markers, is dispatchtop --help.
const (
	usageBegin = "<!-- usage: the output of dispatchtop --help -->\n```\n"
	usageEnd   = "```\n<!-- end of usage -->"
)

// The README's Usage section shows what --help says, verbatim: a flag or a
// command changed in one changes the other (go test -run TestReadmeUsage
// -update-readme . rewrites it).
func TestReadmeUsageIsTheHelp(t *testing.T) {
	var help bytes.Buffer
	if code := cli.Execute([]string{"--help"}, strings.NewReader(""), &help, io.Discard); code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, usageBegin)
	end := strings.Index(text, usageEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no usage block between %q and %q", usageBegin, usageEnd)
	}
	start += len(usageBegin)
	if *updateReadme {
		text = text[:start] + help.String() + text[end:]
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[start:end]; got != help.String() {
		t.Errorf("the README's usage block is not dispatchtop --help (go test -run TestReadmeUsage -update-readme . rewrites it)\nREADME:\n%s\n--help:\n%s", got, help.String())
	}
}

// The README's screenshot, between these markers, is the ui's golden frame
// of the demo fleet.
const (
	screenshotBegin = "<!-- screenshot: ui/testdata/TestGoldenReadme.golden -->\n```\n"
	screenshotEnd   = "\n```\n<!-- end of screenshot -->"
	screenshotFile  = "ui/testdata/TestGoldenReadme.golden"
)

// The README shows the screen as it is drawn: when the ui's golden changes
// (go test ./ui -run TestGoldenReadme -update), this fails until the README
// follows (go test -run TestReadmeScreenshot -update-readme . rewrites it).
func TestReadmeScreenshotIsTheGolden(t *testing.T) {
	golden, err := os.ReadFile(screenshotFile)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, screenshotBegin)
	end := strings.Index(text, screenshotEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md has no screenshot between %q and %q", screenshotBegin, screenshotEnd)
	}
	start += len(screenshotBegin)
	if *updateReadme {
		text = text[:start] + string(golden) + text[end:]
		if err := os.WriteFile("README.md", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := text[start:end]; got != string(golden) {
		t.Errorf("the README's screenshot is not %s (go test -run TestReadmeScreenshot -update-readme . rewrites it)\nREADME:\n%s\ngolden:\n%s", screenshotFile, got, golden)
	}
}

// Every document under docs/ (its .md files) is linked from the README, so
// a reader who starts there finds each of them.
func TestReadmeLinksEveryDoc(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v, %d files", err, len(docs))
	}
	for _, d := range docs {
		if link := "](" + filepath.ToSlash(d) + ")"; !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not link %s (no %q)", d, link)
		}
	}
}

// architecture.md's "Where to look" has a row for each area a change
// starts in; --once and its JSON are one.
func TestArchitectureWhereToLookNamesOnce(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, where, ok := strings.Cut(string(doc), "## Where to look")
	if !ok {
		t.Fatal("docs/architecture.md has no Where to look section")
	}
	for _, want := range []string{"`--once`", "`cli/once.go`", "`report/json.go`", "`docs/schema/dispatchtop-v1.json`"} {
		if !strings.Contains(where, want) {
			t.Errorf("Where to look does not name %s", want)
		}
	}
}
