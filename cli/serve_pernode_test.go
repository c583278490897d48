package cli

import (
	"bytes"
	"net/http"
	"testing"
)

// SPEC §4.2: `serve` names no node in /metrics unless --per-node-metrics
// asks for the per-node series.
func TestServePerNodeMetricsFlag(t *testing.T) {
	perNode := [][]byte{
		[]byte(`dispatchtop_node_action{action="answer",node="S1/ask/3",session="S1"} 1`),
		[]byte(`dispatchtop_heartbeat_age_seconds{node="S1",role="lead",session="S1"}`),
		[]byte(`dispatchtop_blocked_seconds{node="S1/ask/3",role="asker",session="S1"}`),
	}
	root := serveTree(t)
	for _, tt := range []struct {
		name    string
		args    []string
		perNode bool
	}{
		{"by default", nil, false},
		{"with --per-node-metrics", []string{"--per-node-metrics"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startServe(t, nil, append(tt.args, root)...)
			code, body := get(t, p.url+"/metrics", "")
			if code != http.StatusOK {
				t.Fatalf("GET /metrics: %d %s", code, body)
			}
			if !bytes.Contains(body, []byte(`dispatchtop_actionable_nodes{action="answer",session="S1"} 1`)) {
				t.Errorf("/metrics lacks the aggregate of actions")
			}
			for _, series := range perNode {
				if got := bytes.Contains(body, series); got != tt.perNode {
					t.Errorf("%s served: %v, want %v", series, got, tt.perNode)
				}
			}
			if !tt.perNode && bytes.Contains(body, []byte(`node="`)) {
				t.Errorf("a series names a node without --per-node-metrics")
			}
			p.stop(t)
		})
	}
}
