package sources

import "github.com/dispatchtop/dispatchtop/model"

// AgentName is the name a node's own system gives its agent, the one an
// operator knows it by and searches for: opencode-teams' `name`, middle's
// Epic (`epic 42`; its repo is the team), and elsewhere the role
// (TeaParty's `agent_name`, chatroom's role, the native heartbeat's role).
// "" when the system gives none. The dashboard's rows, its `/` filter and
// details, and the `--once` text all say it.
func AgentName(n *model.Node) string {
	switch Kind(n.Source) {
	case OpencodeTeams:
		if name := field(n, "name"); name != "" {
			return name
		}
	case Middle:
		if epic := field(n, "epic"); epic != "" {
			return "epic " + epic
		}
	}
	return n.Role()
}

// field is the value of n's source field called name, or "".
func field(n *model.Node, name string) string {
	for _, f := range n.SourceFields() {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}
