package serve

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/dispatchtop/dispatchtop/model"
)

// labelOf is the value of m's label name ("" when it has none).
func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// perNodeSeries are the series with a node label, one a node.
var perNodeSeries = []string{MetricHeartbeatAge, MetricNodeAction, MetricBlocked}

// SPEC §4.2: a series a node grows without bound as sessions come and go,
// so the per-node series are served only with PerNodeMetrics
// (--per-node-metrics); the aggregates per session and role always are.
func TestPerNodeMetricsAreOptIn(t *testing.T) {
	snap := fixtureSnapshot(t)
	scrapeAt := fixedNow.Add(5 * time.Second)
	scrapeWith := func(perNode bool) map[string]float64 {
		srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return scrapeAt }, PerNodeMetrics: perNode})
		return values(scrape(t, srv.Handler(), nil))
	}

	t.Run("by default no series names a node", func(t *testing.T) {
		for series := range scrapeWith(false) {
			if strings.Contains(series, `node="`) {
				t.Errorf("%s served without PerNodeMetrics", series)
			}
		}
	})

	t.Run("with PerNodeMetrics the per-node series are served too", func(t *testing.T) {
		got := scrapeWith(true)
		for _, tt := range []struct {
			series string
			want   float64
		}{
			{`dispatchtop_heartbeat_age_seconds{node="A",role="lead",session="A"}`, 15},
			{`dispatchtop_heartbeat_age_seconds{node="A/test/3",role="tester",session="A"}`, 605},
			{`dispatchtop_node_action{action="kill",node="A/test/3",session="A"}`, 1},
			{`dispatchtop_node_action{action="answer",node="A/ask/4",session="A"}`, 1},
			{`dispatchtop_node_action{action="resume",node="B",session="B"}`, 1},
			{`dispatchtop_node_action{action="wait",node="A/code/2",session="A"}`, 1},
			{`dispatchtop_blocked_seconds{node="A/ask/4",role="asker",session="A"}`, 20*60 + 5},
			// The aggregates stay.
			{`dispatchtop_heartbeat_age_max_seconds{role="tester",session="A"}`, 605},
			{`dispatchtop_actionable_nodes{action="kill",session="A"}`, 1},
			{`dispatchtop_blocked_max_seconds{role="asker",session="A"}`, 20*60 + 5},
		} {
			if v, ok := got[tt.series]; !ok || v != tt.want {
				t.Errorf("%s = %v (served %v), want %v", tt.series, v, ok, tt.want)
			}
		}
		for _, name := range perNodeSeries {
			if !strings.Contains(dump(got, name+"{"), `node="`) {
				t.Errorf("%s not served with PerNodeMetrics", name)
			}
		}
	})
}

// The aggregate is what the per-node series would say: the oldest beat of
// a session's role is the largest of its nodes' ages, and the nodes per
// action are as many as the per-node series of that action.
func TestAggregatesAgreeWithThePerNodeSeries(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }, PerNodeMetrics: true})
	fams := scrape(t, srv.Handler(), nil)
	maxAge := map[[2]string]float64{}
	for _, m := range fams[MetricHeartbeatAge].GetMetric() {
		k := [2]string{labelOf(m, "session"), labelOf(m, "role")}
		maxAge[k] = max(maxAge[k], m.GetGauge().GetValue())
	}
	if len(maxAge) == 0 {
		t.Fatal("no per-node heartbeat ages served")
	}
	for _, m := range fams[MetricHeartbeatAgeMax].GetMetric() {
		k := [2]string{labelOf(m, "session"), labelOf(m, "role")}
		if got, want := m.GetGauge().GetValue(), maxAge[k]; got != want {
			t.Errorf("%s%v = %v, the per-node maximum is %v", MetricHeartbeatAgeMax, k, got, want)
		}
		delete(maxAge, k)
	}
	if len(maxAge) > 0 {
		t.Errorf("no aggregate for %v", maxAge)
	}
	perAction := map[[2]string]float64{}
	for _, m := range fams[MetricNodeAction].GetMetric() {
		perAction[[2]string{labelOf(m, "session"), labelOf(m, "action")}]++
	}
	for _, m := range fams[MetricActionableNodes].GetMetric() {
		k := [2]string{labelOf(m, "session"), labelOf(m, "action")}
		if got, want := m.GetGauge().GetValue(), perAction[k]; got != want {
			t.Errorf("%s%v = %v, per-node series: %v", MetricActionableNodes, k, got, want)
		}
		delete(perAction, k)
	}
	if len(perAction) > 0 {
		t.Errorf("no aggregate for %v", perAction)
	}
}
