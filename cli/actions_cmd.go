package cli

// Placeholder until the recovery engine lands; replaced by its owner.

import (
	"errors"

	"github.com/spf13/cobra"
)

func notYet(use string) *cobra.Command {
	return &cobra.Command{Use: use, RunE: func(*cobra.Command, []string) error {
		return failure(errors.New(use + ": not built yet"))
	}}
}

func newKillCmd(g *Globals) *cobra.Command    { return notYet("kill") }
func newResumeCmd(g *Globals) *cobra.Command  { return notYet("resume") }
func newCompactCmd(g *Globals) *cobra.Command { return notYet("compact") }
func newMergeCmd(g *Globals) *cobra.Command   { return notYet("merge") }
func newRecoverCmd(g *Globals) *cobra.Command { return notYet("recover") }
