package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/dispatchtop/dispatchtop/model"
)

// fleetSnapshot is a fleet view as the remote feed merges it: host-a holds
// the worked example, host-b one dead session; every id is prefixed by its
// host and every session hangs under its host's row.
func fleetSnapshot() *model.Snapshot {
	fleet := &model.Snapshot{
		GeneratedAt: clock12, Thresholds: model.DefaultThresholds(), ByID: map[string]*model.Node{},
		Roots: []string{"host-a:/srv/fleet/.sessions", "host-b:/srv/other/.sessions"},
		Watch: model.WatchInfo{Mode: "polling", Interval: 2 * time.Second, Reason: "remote, 2 hosts"},
	}
	hostSpecs := map[string][]spec{
		"host-a": exampleSpecs(),
		"host-b": {{id: "Z", role: "lead", state: model.StateDead, action: model.ActionResume, reason: "pid 77 gone", pid: 77, beat: 3 * time.Minute}},
	}
	for _, name := range []string{"host-a", "host-b"} {
		specs := hostSpecs[name]
		for i := range specs {
			specs[i].id = name + "/" + specs[i].id
		}
		sub := buildSnapshot("/srv", clock12, specs)
		host := &model.Node{ID: name, InfraDir: "http://" + name + ":9477/api/v1/snapshot", Action: model.ActionNone,
			Reason: "http://" + name + ":9477/api/v1/snapshot: 10 nodes"}
		if name == "host-b" {
			host.Reason = "unreachable since 11:59:02 (showing its snapshot of 11:59:00): connection refused"
		}
		for _, s := range sub.Sessions {
			s.Parent, s.ParentID = host, host.ID
		}
		host.Children = sub.Sessions
		fleet.Sessions = append(fleet.Sessions, host)
		fleet.ByID[name] = host
		for id, n := range sub.ByID {
			fleet.ByID[id] = n
		}
	}
	return fleet
}

func fleetHosts() []model.Host {
	return []model.Host{
		{Name: "host-a", Reachable: true, Since: clock12.Add(-time.Hour)},
		{Name: "host-b", Reachable: false, Since: clock12.Add(-58 * time.Second), Err: "connection refused"},
	}
}

func newFleetModel(t *testing.T, w, h int) *Model {
	t.Helper()
	return newTestModel(t, w, h, Options{Initial: fleetSnapshot(), Hosts: fleetHosts(), Readonly: true})
}

// The fleet view (issue 7): host rows at the top with their reachability,
// the hosts' sessions below them, each host's state in the header, counts
// over the hosts' nodes only, read-only.
func TestGoldenFleetView(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"120x40", 120, 40}} {
		t.Run(sz.name, func(t *testing.T) {
			m := newFleetModel(t, sz.w, sz.h)
			frame := m.View().Content
			checkFrame(t, frame, sz.w, sz.h)
			golden.RequireEqual(t, ansi.Strip(frame))
		})
	}
}

func TestFleetHeaderAndRows(t *testing.T) {
	m := newFleetModel(t, 160, 40)
	plain := stripped(m)
	lines := strings.Split(plain, "\n")
	header := strings.Join(lines[:m.frame.headerH], "\n")
	tests := []struct {
		name, where, want string
	}{
		{"reachable host in the header", header, "host-a ok"},
		{"unreachable host and since when", header, "host-b unreachable since 11:59:02"},
		{"counts leave the host rows out", header, "11 nodes/4 sessions"},
		{"dead counts both hosts", header, "✖ 4 dead"},
		{"read-only", header, "read-only"},
		{"host-a row", plain, "▣ host-a"},
		{"host-b row says unreachable", plain, "unreachable"},
		{"a host's session under it", plain, "└─ ✖ lead Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.where, tt.want) {
				t.Errorf("lacks %q:\n%s", tt.want, tt.where)
			}
		})
	}
}

// A later update brings new reachability: the header follows it, and an
// update without hosts keeps the last known.
func TestFleetReachabilityUpdates(t *testing.T) {
	m := newFleetModel(t, 160, 40)
	up := fleetHosts()
	up[1] = model.Host{Name: "host-b", Reachable: true, Since: clock12}
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot(), Hosts: up}})
	if h := strings.Join(strings.Split(stripped(m), "\n")[:m.frame.headerH], "\n"); !strings.Contains(h, "host-b ok") || strings.Contains(h, "unreachable") {
		t.Errorf("header after host-b came back:\n%s", h)
	}
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot()}})
	if h := strings.Join(strings.Split(stripped(m), "\n")[:m.frame.headerH], "\n"); !strings.Contains(h, "host-b ok") {
		t.Errorf("an update without hosts dropped them:\n%s", h)
	}
}

// SPEC §8, the fleet under churn: every update brings the hosts, whose last
// answer moves each time; the rows on screen are drawn again only when a
// host's reachability (what a host row shows of them) moved.
func TestAnUpdateOfTheHostsRedrawsTheRowsOnlyWhenAReachabilityMoved(t *testing.T) {
	m := newFleetModel(t, 160, 40)
	m.View()
	epoch := m.frame.rowEpoch
	answered := fleetHosts()
	for i := range answered {
		answered[i].LastSeen = clock12.Add(time.Second)
	}
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot(), Hosts: answered}})
	m.View()
	if m.frame.rowEpoch != epoch {
		t.Errorf("hosts that answered again redrew every row (epoch %d, was %d)", m.frame.rowEpoch, epoch)
	}
	back := fleetHosts()
	back[1] = model.Host{Name: "host-b", Reachable: true, Since: clock12}
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot(), Hosts: back}})
	row := ""
	for _, line := range strings.Split(stripped(m), "\n") {
		if strings.Contains(line, "▣ host-b") {
			row = line
		}
	}
	if f := strings.Fields(row); m.frame.rowEpoch == epoch || len(f) < 3 || f[2] != "ok" {
		t.Errorf("host-b came back, epoch %d (was %d), its row:\n%s", m.frame.rowEpoch, epoch, row)
	}
}

// Read-only: the action keys open no dialog in the fleet view.
func TestFleetViewIsReadonly(t *testing.T) {
	m := newFleetModel(t, 120, 40)
	m.moveTo(m.rowIndex("host-a/A/test/3"))
	for _, k := range []string{"x", "X", "r", "c", "m"} {
		run(m, press(m, k))
		if m.dialog != nil {
			t.Fatalf("%s opened a dialog in a read-only fleet view", k)
		}
	}
}

// With many hosts the reachability line still fits: it says how many are
// up and down.
func TestFleetHostsLineFits(t *testing.T) {
	var hosts []model.Host
	for _, n := range []string{"alpha-very-long-host-name", "beta-very-long-host-name", "gamma-very-long-host-name", "delta-very-long-host-name"} {
		hosts = append(hosts, model.Host{Name: n, Reachable: n != "beta-very-long-host-name", Since: clock12})
	}
	m := newTestModel(t, 80, 24, Options{Initial: fleetSnapshot(), Hosts: hosts, Readonly: true})
	frame := m.View().Content
	checkFrame(t, frame, 80, 24)
	if !strings.Contains(ansi.Strip(frame), "hosts: 3 hosts ok, 1 host unreachable") {
		t.Errorf("no summary of the hosts:\n%s", ansi.Strip(frame))
	}
}

// The detail pane of a host row says where the host is and since when it
// does not answer, instead of node fields it has none of.
func TestFleetHostDetail(t *testing.T) {
	m := newFleetModel(t, 120, 40)
	m.moveTo(m.rowIndex("host-b"))
	run(m, press(m, "enter"))
	plain := stripped(m)
	for _, want := range []string{
		"host          host-b",
		"snapshot      http://host-b:9477/api/v1/snapshot",
		"reachable     unreachable",
		"down since    2026-11-22 11:59:02 (58s ago)",
		"error         connection refused",
		"sessions      1",
	} {
		if !strings.Contains(plain, want) {
			t.Errorf("host detail lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(plain, "retries") {
		t.Errorf("host detail shows node fields:\n%s", plain)
	}
}

// A host that stops or starts answering is an event in the event pane.
func TestFleetReachabilityEvents(t *testing.T) {
	m := newFleetModel(t, 120, 40)
	up := fleetHosts()
	up[0] = model.Host{Name: "host-a", Reachable: false, Since: clock12, Err: "context deadline exceeded"}
	up[1] = model.Host{Name: "host-b", Reachable: true, Since: clock12}
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot(), Hosts: up}})
	// The same reachability again is no new event.
	m.Update(updateMsg{update: model.Update{Snapshot: fleetSnapshot(), Hosts: up}})
	press(m, "e")
	plain := stripped(m)
	for _, want := range []string{
		"12:00:00  host-a  ok → unreachable  context deadline exceeded",
		"12:00:00  host-b  unreachable → ok",
	} {
		if strings.Count(plain, want) != 1 {
			t.Errorf("event pane shows %q %d times, want once:\n%s", want, strings.Count(plain, want), plain)
		}
	}
}
