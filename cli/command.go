package cli

import (
	"os"

	"github.com/spf13/cobra"
)

// Command is dispatchtop's command tree, as Execute runs it, for what is
// generated from it (the man pages). It runs nothing until executed.
func Command() *cobra.Command {
	root, _ := newRootCmd(os.Stdin, os.Stdout, os.Stderr)
	return root
}
