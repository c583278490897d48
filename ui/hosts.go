package ui

import (
	"slices"
	"strconv"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
)

// A fleet view (dispatchtop --remote) shows one top-level row per host,
// each host's sessions below it. The host rows are nodes of the merged
// snapshot with no state of their own: they are drawn with their
// reachability instead and left out of the counts.

// hostGlyph marks a host row; it reads without colour.
const hostGlyph = "▣"

// setHosts takes in the hosts' reachability; a host that stops or starts
// answering is an event.
func (m *Model) setHosts(hosts []model.Host) {
	for _, h := range hosts {
		i, known := m.hostOf[h.Name]
		if !known || m.hosts[i].Reachable == h.Reachable {
			continue
		}
		e := event{time: h.Since, id: h.Name, text: hostWord(m.hosts[i]) + " → " + hostWord(h), reason: h.Err, bad: !h.Reachable}
		if e.time.IsZero() {
			e.time = m.opts.Now()
		}
		m.addEvent(e)
	}
	drawn := slices.EqualFunc(m.hosts, hosts, func(a, b model.Host) bool {
		return a.Name == b.Name && a.Reachable == b.Reachable
	})
	m.hosts = hosts
	if m.hostOf == nil {
		m.hostOf = map[string]int{}
	}
	clear(m.hostOf)
	for i, h := range hosts {
		m.hostOf[h.Name] = i
	}
	if !drawn {
		// A host row's state cell is its reachability: drawn again. Each
		// update brings the hosts (their last answer moves); the rows on
		// screen are drawn again only when that changed.
		m.frame.rowEpoch++
	}
	m.frame.dirty = true
}

// host reports whether n is a host row, and its reachability.
func (m *Model) host(n *model.Node) (model.Host, bool) {
	if len(m.hosts) == 0 || n.Parent != nil || n.ParentID != "" {
		return model.Host{}, false
	}
	i, ok := m.hostOf[n.ID]
	if !ok {
		return model.Host{}, false
	}
	return m.hosts[i], true
}

// hostWord is a host row's state cell.
func hostWord(h model.Host) string {
	if h.Reachable {
		return "ok"
	}
	return "unreachable"
}

func (m *Model) hostStyle(h model.Host) lipgloss.Style {
	if h.Reachable {
		return m.styles.Success
	}
	return m.styles.Error
}

// summarize counts the snapshot's nodes; in a fleet view the host rows are
// not nodes, so the counts are those of the sessions below them.
func (m *Model) summarize() model.Summary {
	if len(m.hosts) == 0 {
		return m.tallies.summarize(m.snap.Sessions, len(m.snap.Problems))
	}
	// The fleet's sessions, in an array the tally keeps: the one it
	// held comes back for the next (no 20,000 pointers copied an update).
	sessions := m.fleetSessions[:0]
	for _, top := range m.snap.Sessions {
		if _, ok := m.host(top); ok {
			sessions = append(sessions, top.Children...)
		} else {
			sessions = append(sessions, top)
		}
	}
	sum, spare := m.tallies.summarizeOwned(sessions, len(m.snap.Problems))
	m.fleetSessions = spare
	return sum
}

// renderHostsLine is the header's reachability line:
// "hosts: host-a ok  host-b unreachable since 12:01:02".
func (m *Model) renderHostsLine(w int) string {
	tokens := make([]string, 0, len(m.hosts))
	for i, h := range m.hosts {
		word := termtext.Line(h.Name) + " " + hostWord(h)
		if !h.Reachable && !h.Since.IsZero() {
			word += " since " + h.Since.Format("15:04:05")
		}
		prefix := ""
		if i == 0 {
			prefix = "hosts: "
		}
		tokens = append(tokens, prefix+m.hostStyle(h).Render(word))
	}
	line, rest := pack(tokens, w)
	if len(rest) > 0 {
		// Too many hosts for one line: the unreachable ones matter most.
		down := 0
		for _, h := range m.hosts {
			if !h.Reachable {
				down++
			}
		}
		line, _ = pack([]string{"hosts: " + m.styles.Warning.Render(
			pluralHosts(len(m.hosts)-down)+" ok, "+pluralHosts(down)+" unreachable")}, w)
	}
	return line
}

func pluralHosts(k int) string {
	if k == 1 {
		return "1 host"
	}
	return strconv.Itoa(k) + " hosts"
}

// hostDetail is the detail pane of a host row: where it is and whether it
// answers; its nodes have their own.
func hostDetail(h model.Host, n *model.Node, add func(label, value string), stamp func(time.Time) string) {
	add("host", h.Name)
	add("snapshot", n.InfraDir)
	add("reachable", hostWord(h))
	since := "since"
	if !h.Reachable {
		since = "down since"
	}
	add(since, stamp(h.Since))
	add("error", h.Err)
	add("detail", n.Reason)
	add("sessions", strconv.Itoa(len(n.Children)))
}
