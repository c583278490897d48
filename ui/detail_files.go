package ui

// The bytes of a node's files that the live engine does not keep (SPEC §8:
// at 100,000 nodes they weigh tens of MB): the details read them in a
// command when they open, and again at each update while open, as they do
// the output tail.

import (
	"encoding/json"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// filesMsg is what was read of a node's files for the details.
type filesMsg struct {
	id        string
	heartbeat []byte // as read; nil when it was not
	// heartbeatErr says why the heartbeat could not be read ("" when it
	// was, or when the node has none).
	heartbeatErr string
	history      []json.RawMessage // the CfA history
	line         model.RegistryLine
	lineOK       bool // line is the node's, in its parent's registry
}

// readsFiles reports whether the details read n's files: a node of the
// file protocol, read from this machine.
func (m *Model) readsFiles(n *model.Node) bool {
	return m.opts.Files != nil && (n.Source == "" || n.Source == "native") && n.InfraDir != ""
}

// loadFiles reads n's files (and its parent's registry) in a command.
func (m *Model) loadFiles(n *model.Node) tea.Cmd {
	if !m.readsFiles(n) {
		return nil
	}
	read := m.opts.Files
	id, root, dir, hb := n.ID, n.Root, n.InfraDir, n.HeartbeatPath
	var parentRoot, parentDir string
	if p := m.snap.ParentOf(n); p != nil && p.HasRegistry && hb != "" {
		parentRoot, parentDir = p.Root, p.InfraDir
	}
	return func() tea.Msg {
		msg := filesMsg{id: id}
		facts, err := read(root, dir)
		if err != nil {
			msg.heartbeatErr = err.Error()
		} else {
			msg.heartbeat = facts.HeartbeatRaw()
			if msg.heartbeat == nil {
				for _, p := range facts.Problems() {
					if p.Path == hb {
						msg.heartbeatErr = p.Path + ": " + p.Error
					}
				}
			}
			if facts.Cfa != nil && facts.Cfa.CfaDetail != nil {
				msg.history = facts.Cfa.History
			}
		}
		if parentDir != "" {
			if p, err := read(parentRoot, parentDir); err == nil {
				msg.line, msg.lineOK = lineNaming(p.RegistryLines(), p.InfraDir, hb)
			}
		}
		return msg
	}
}

// heartbeatLines is the details' raw heartbeat: the node's bytes, else
// those read for the details.
func (m *Model) heartbeatLines(n *model.Node) []string {
	f := m.files
	switch {
	case n.HeartbeatRaw() != nil || n.HeartbeatPath == "" || !m.readsFiles(n):
		return rawJSONLines(n.HeartbeatRaw())
	case f.id != n.ID:
		return []string{"  loading…"}
	case f.heartbeatErr != "":
		return []string{"  heartbeat not readable: " + termtext.Line(f.heartbeatErr)}
	}
	return rawJSONLines(f.heartbeat)
}

// cfaHistory is the node's CfA history, else the one read for the details.
func (m *Model) cfaHistory(n *model.Node) []json.RawMessage {
	var history []json.RawMessage
	if n.Cfa.CfaDetail != nil {
		history = n.Cfa.History
	}
	if history == nil && m.files.id == n.ID {
		return m.files.history
	}
	return history
}

// registryLine finds the node's line, verbatim, in its parent's registry:
// the parent's bytes, else those read for the details.
func (m *Model) registryLine(n *model.Node) (model.RegistryLine, bool) {
	p := m.snap.ParentOf(n)
	if p == nil || n.HeartbeatPath == "" {
		return model.RegistryLine{}, false
	}
	line, ok := lineNaming(p.RegistryLines(), p.InfraDir, n.HeartbeatPath)
	if ok && line.Raw == nil && m.files.id == n.ID && m.files.lineOK {
		return m.files.line, true
	}
	return line, ok
}

// lineNaming finds the line of a registry (of the infra dir dir) that
// names the heartbeat hb.
func lineNaming(registry []model.RegistryLine, dir, hb string) (model.RegistryLine, bool) {
	want := filepath.Clean(hb)
	for _, l := range registry {
		if l.Entry == nil {
			continue
		}
		path := l.Entry.Heartbeat
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if filepath.Clean(path) == want {
			return l, true
		}
	}
	return model.RegistryLine{}, false
}
