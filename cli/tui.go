package cli

// Placeholder until the TUI lands; replaced by its owner.

import (
	"context"
	"errors"
)

func runTUI(ctx context.Context, g *Globals) error {
	return failure(errors.New("the live view is not built yet; use --once"))
}
