package cli

// Placeholder until the demo lands; replaced by its owner. hiddenCommands
// returns the internal commands the demo re-executes the binary with.

import "github.com/spf13/cobra"

func newDemoCmd(g *Globals) *cobra.Command { return notYet("demo") }

func hiddenCommands(g *Globals) []*cobra.Command { return nil }
