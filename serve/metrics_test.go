package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// scrape GETs /metrics from h and parses the text exposition.
func scrape(t *testing.T, h http.Handler, header http.Header) map[string]*dto.MetricFamily {
	t.Helper()
	req := localRequest(http.MethodGet, MetricsPath)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", MetricsPath, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text exposition format", ct)
	}
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// series renders one sample as name{k="v",...} with sorted labels.
func series(name string, m *dto.Metric) string {
	var labels []string
	for _, l := range m.GetLabel() {
		labels = append(labels, l.GetName()+"="+`"`+l.GetValue()+`"`)
	}
	sort.Strings(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// values flattens families to series -> value (gauges and counters).
func values(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetGauge() != nil:
				out[series(name, m)] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[series(name, m)] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// The metrics of the served fixture tree: nodes by state and flag per
// session, the oldest heartbeat per session and role at scrape time,
// recommended actions per session, the longest blocked wait per session and
// role, watch mode, scan duration (issue 7).
func TestMetricsOfFixtureTree(t *testing.T) {
	snap := fixtureSnapshot(t)
	snap.Watch = model.WatchInfo{Mode: "polling", Interval: 2 * time.Second, Reason: "polling requested", Overflows: 3}
	scrapeAt := fixedNow.Add(5 * time.Second)
	srv := New(Options{
		Snapshot:     func() *model.Snapshot { return snap },
		Now:          func() time.Time { return scrapeAt },
		ScanDuration: 1500 * time.Millisecond,
		Version:      "v9.9.9",
	})
	got := values(scrape(t, srv.Handler(), nil))

	tests := []struct {
		name   string
		series string
		want   float64
	}{
		{"running nodes of A", `dispatchtop_nodes{session="A",state="running"}`, 3},
		{"dead nodes of A", `dispatchtop_nodes{session="A",state="dead"}`, 1},
		{"every state present, zeros included", `dispatchtop_nodes{session="A",state="missing"}`, 0},
		{"dead session B", `dispatchtop_nodes{session="B",state="dead"}`, 1},
		{"stalled in A", `dispatchtop_flagged_nodes{flag="stalled",session="A"}`, 2},
		{"kill candidate in A", `dispatchtop_flagged_nodes{flag="kill_candidate",session="A"}`, 1},
		{"blocked in A", `dispatchtop_flagged_nodes{flag="blocked",session="A"}`, 1},
		{"oldest beat of the session's leads at scrape time", `dispatchtop_heartbeat_age_max_seconds{role="lead",session="A"}`, 15},
		{"oldest beat of the session's testers", `dispatchtop_heartbeat_age_max_seconds{role="tester",session="A"}`, 605},
		{"kill recommended", `dispatchtop_actionable_nodes{action="kill",session="A"}`, 1},
		{"answer recommended", `dispatchtop_actionable_nodes{action="answer",session="A"}`, 1},
		{"resume recommended", `dispatchtop_actionable_nodes{action="resume",session="B"}`, 1},
		{"wait recommended for a dead child of a live lead", `dispatchtop_actionable_nodes{action="wait",session="A"}`, 1},
		{"blocked since its sentinel was written", `dispatchtop_blocked_max_seconds{role="asker",session="A"}`, 20*60 + 5},
		{"sessions", `dispatchtop_sessions{}`, 2},
		{"problems", `dispatchtop_problems{}`, 0},
		{"scan duration", `dispatchtop_scan_duration_seconds{}`, 1.5},
		{"snapshot time", `dispatchtop_snapshot_timestamp_seconds{}`, float64(fixedNow.Unix())},
		{"watch mode", `dispatchtop_watch_mode{mode="polling",reason="polling requested"}`, 1},
		{"poll interval", `dispatchtop_watch_poll_interval_seconds{}`, 2},
		{"overflows", `dispatchtop_watch_overflows_total{}`, 3},
		{"pid check on", `dispatchtop_pid_check{}`, 1},
		{"build info", `dispatchtop_build_info{version="v9.9.9"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := got[tt.series]
			if !ok {
				t.Fatalf("%s not served; have:\n%s", tt.series, dump(got, strings.SplitN(tt.series, "{", 2)[0]))
			}
			if v != tt.want {
				t.Errorf("%s = %v, want %v", tt.series, v, tt.want)
			}
		})
	}

	absent := []struct{ name, series string }{
		{"no beat age for a session without a running node", `dispatchtop_heartbeat_age_max_seconds{role="lead",session="B"}`},
		{"no action series for action none", `dispatchtop_actionable_nodes{action="none",session="A"}`},
		{"no blocked series for a role none of whose nodes is blocked", `dispatchtop_blocked_max_seconds{role="tester",session="A"}`},
		{"no flag series for an absent flag", `dispatchtop_flagged_nodes{flag="orphaned",session="A"}`},
	}
	for _, tt := range absent {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := got[tt.series]; ok {
				t.Errorf("%s served, want it absent", tt.series)
			}
		})
	}
}

func dump(got map[string]float64, prefix string) string {
	var lines []string
	for k, v := range got {
		if strings.HasPrefix(k, prefix) {
			lines = append(lines, k+" "+pmodel.SampleValue(v).String())
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// The transitions counter counts by kind and the state after; a node that
// becomes blocked, whose sentinel's mtime is unknown, is timed from the
// transition, not from the next scrape.
func TestTransitionsCounterAndBlockedSince(t *testing.T) {
	snap := fixtureSnapshot(t)
	snap.Node("A/ask/4").Blocked.Since = time.Time{}
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	blockedAt := fixedNow.Add(-2 * time.Minute)
	srv.Observe([]model.Transition{
		{Time: fixedNow, ID: "C", From: "", To: model.StateRunning},
		{Time: fixedNow, ID: "A/code/2", From: model.StateRunning, To: model.StateDead},
		{Time: fixedNow, ID: "B", From: model.StateRunning, To: model.StateDead},
		{Time: blockedAt, ID: "A/ask/4", From: model.StateRunning, To: model.StateRunning,
			FromFlags: []model.Flag{model.FlagStalled}, ToFlags: []model.Flag{model.FlagStalled, model.FlagBlocked}},
		{Time: fixedNow, ID: "gone", From: model.StateFinished, To: ""},
	})
	got := values(scrape(t, srv.Handler(), nil))
	tests := []struct {
		series string
		want   float64
	}{
		{`dispatchtop_transitions_total{kind="appeared",to="running"}`, 1},
		{`dispatchtop_transitions_total{kind="state",to="dead"}`, 2},
		{`dispatchtop_transitions_total{kind="flags",to="running"}`, 1},
		{`dispatchtop_transitions_total{kind="vanished",to="none"}`, 1},
		{`dispatchtop_blocked_max_seconds{role="asker",session="A"}`, 120},
	}
	for _, tt := range tests {
		if v, ok := got[tt.series]; !ok || v != tt.want {
			t.Errorf("%s = %v (served %v), want %v", tt.series, v, ok, tt.want)
		}
	}

	// Once the node is no longer blocked, its clock is forgotten.
	srv.Observe([]model.Transition{{Time: fixedNow, ID: "A/ask/4", From: model.StateRunning, To: model.StateRunning,
		FromFlags: []model.Flag{model.FlagBlocked}}})
	srv.blocked.mu.Lock()
	_, still := srv.blocked.since["A/ask/4"]
	srv.blocked.mu.Unlock()
	if still {
		t.Error("blocked-since kept after the flag cleared")
	}
}

// The registry is the server's own: two servers in one process do not
// collide (the global default registry would panic on the second).
func TestOwnRegistry(t *testing.T) {
	snap := fixtureSnapshot(t)
	a := New(Options{Snapshot: func() *model.Snapshot { return snap }})
	b := New(Options{Snapshot: func() *model.Snapshot { return snap }})
	a.Observe([]model.Transition{{ID: "x", To: model.StateRunning}})
	va, vb := values(scrape(t, a.Handler(), nil)), values(scrape(t, b.Handler(), nil))
	key := `dispatchtop_transitions_total{kind="appeared",to="running"}`
	if va[key] != 1 || vb[key] != 0 {
		t.Errorf("a=%v b=%v, want 1 and 0: registries are shared", va[key], vb[key])
	}
}

// Ids are directory names and need not be UTF-8; a scrape still succeeds,
// the bad bytes replaced (a label value must be UTF-8).
func TestMetricsOfANonUTF8Id(t *testing.T) {
	root, probe := fixtureTree(t)
	bad := filepath.Join(root, "S\xff")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	hb := filepath.Join(bad, ".heartbeat")
	if err := os.WriteFile(hb, []byte(`{"pid": 101, "parent_heartbeat": "", "role": "lead", "started": 1795000000, "status": "running"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(hb, fixedNow, fixedNow); err != nil {
		t.Fatal(err)
	}
	snap, err := scanner.Scan(scanner.Options{Roots: []string{root}, Thresholds: model.DefaultThresholds(),
		Probe: probe, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Node("S\xff") == nil {
		t.Fatal("the scanner did not find the node")
	}
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	got := values(scrape(t, srv.Handler(), nil))
	if v, ok := got[`dispatchtop_nodes{session="S`+"\uFFFD"+`",state="running"}`]; !ok || v != 1 {
		t.Errorf("the node with a non-UTF-8 id is not counted (%v, %v)", v, ok)
	}
}

// A scraper that asks for OpenMetrics gets it, counters and all.
func TestMetricsOpenMetrics(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	srv.Observe([]model.Transition{{Time: fixedNow, ID: "A", From: model.StateRunning, To: model.StateDead}})
	req := localRequest(http.MethodGet, MetricsPath)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/openmetrics-text") {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		"# TYPE dispatchtop_transitions counter",
		`dispatchtop_transitions_total{kind="state",to="dead"} 1`,
		`dispatchtop_nodes{session="A",state="running"} 3`,
		"# EOF",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("OpenMetrics body lacks %q", want)
		}
	}
}

// A quiet fleet still serves the transitions counter, at zero for every kind
// and state after, so rate() and increase() rules have a series to read
// from the first scrape rather than "no data".
func TestTransitionsCounterExistsBeforeAnyTransition(t *testing.T) {
	snap := fixtureSnapshot(t)
	got := values(scrape(t, New(Options{Snapshot: func() *model.Snapshot { return snap }}).Handler(), nil))
	want := []string{`dispatchtop_transitions_total{kind="vanished",to="none"}`}
	for _, st := range model.States {
		for _, kind := range []string{KindAppeared, KindState, KindFlags} {
			want = append(want, `dispatchtop_transitions_total{kind="`+kind+`",to="`+string(st)+`"}`)
		}
	}
	for _, series := range want {
		if v, ok := got[series]; !ok || v != 0 {
			t.Errorf("%s = %v (served %v), want 0 and served", series, v, ok)
		}
	}
}

// The session label stays bounded as sessions come and go: sessions whose
// nodes all finished are counted under one label, and past the cap the
// calm ones under another; a session that wants attention keeps its own.
// Every node is still counted once.
func TestSessionLabelStaysBounded(t *testing.T) {
	snap := &model.Snapshot{GeneratedAt: fixedNow, Thresholds: model.DefaultThresholds(), ByID: map[string]*model.Node{}}
	add := func(id string, st model.State, action model.Action) {
		n := &model.Node{ID: id, State: st, Action: action}
		snap.Sessions = append(snap.Sessions, n)
		snap.ByID[id] = n
	}
	for i := range 30 {
		add(fmt.Sprintf("calm-%02d", i), model.StateRunning, model.ActionNone)
	}
	for i := range 20 {
		add(fmt.Sprintf("done-%02d", i), model.StateFinished, model.ActionNone)
	}
	for i := range 5 {
		add(fmt.Sprintf("z-dead-%02d", i), model.StateDead, model.ActionResume)
	}
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }, MaxSessionLabels: 10})
	families, err := srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	total := 0.0
	for _, fam := range families {
		if fam.GetName() != MetricNodes {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "session" {
					labels[l.GetValue()] = true
				}
			}
			total += m.GetGauge().GetValue()
		}
	}
	if len(labels) != 12 {
		t.Errorf("%d session labels, want 10 of their own + %s + %s: %v", len(labels), SessionFinished, SessionOther, labels)
	}
	for i := range 5 {
		if id := fmt.Sprintf("z-dead-%02d", i); !labels[id] {
			t.Errorf("%s wants attention and has no label of its own", id)
		}
	}
	if labels["done-00"] || !labels[SessionFinished] || !labels[SessionOther] {
		t.Errorf("finished sessions or those past the cap have labels of their own: %v", labels)
	}
	if total != 55 {
		t.Errorf("the nodes counted add up to %v, want 55", total)
	}
}
