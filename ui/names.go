package ui

// A node's name: what its own system calls the agent, read from the
// source's fields, so a row, the `/` filter and the details speak of
// `oc-scribe`, not of a uuid.

import (
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// sourceField is the value of n's source field called name, or "".
func sourceField(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// agentName is the name n's own system gives its agent: opencode-teams'
// `name`, middle's Epic (`epic 42`; its repo is the team), and elsewhere
// the role (TeaParty's `agent_name`, chatroom's role, the native
// heartbeat's role). "" when the system gives none.
func agentName(n *model.Node) string {
	switch sources.Kind(n.Source) {
	case sources.OpencodeTeams:
		if name := sourceField(n, "name"); name != "" {
			return name
		}
	case sources.Middle:
		if epic := sourceField(n, "epic"); epic != "" {
			return "epic " + epic
		}
	}
	return n.Role()
}
