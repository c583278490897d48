package cli

// Placeholder until wrap lands; replaced by its owner.

import "github.com/spf13/cobra"

func newWrapCmd(g *Globals) *cobra.Command { return notYet("wrap") }
