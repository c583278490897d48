// Package manpage writes dispatchtop's man pages (section 1) from its
// command tree, one page a command, with cobra's generator.
package manpage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/dispatchtop/dispatchtop/cli"
)

// Dir is where `make man` writes the pages, in the repository.
const Dir = "docs/man"

// Write generates the pages of every command (the shell completion
// included, hidden helpers excluded) into dir, which it creates. The date
// of the page header is SOURCE_DATE_EPOCH when set (`make man` sets the last
// commit's), else today.
func Write(dir string) error {
	root := cli.Command()
	root.InitDefaultCompletionCmd()
	disableAutoGenTag(root) // no generation date in the body: pages change only with the commands
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	header := &doc.GenManHeader{Title: "DISPATCHTOP", Section: "1", Source: "dispatchtop", Manual: "dispatchtop manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages in %s: %w", dir, err)
	}
	return nil
}

func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}

// Pages reads the pages in dir: file name to content, the date of the
// header line (.TH) left out, so two generations compare equal whenever the
// commands do.
func Pages(dir string) (map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		return nil, err
	}
	pages := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, ".TH ") {
				lines[i] = undated(l)
			}
		}
		pages[filepath.Base(p)] = strings.Join(lines, "\n")
	}
	return pages, nil
}

// undated is a .TH line without its date field (the fourth): .TH "TITLE"
// "SECTION" "DATE" "SOURCE" "MANUAL".
func undated(th string) string {
	fields := strings.SplitN(th, `" "`, 5)
	if len(fields) == 5 {
		fields[2] = ""
	}
	return strings.Join(fields, `" "`)
}
