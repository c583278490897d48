package ui

// A node's name: what its own system calls the agent (sources.AgentName),
// so a row, the `/` filter and the details speak of `oc-scribe`, not of a
// uuid.

import (
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

func agentName(n *model.Node) string { return sources.AgentName(n) }
