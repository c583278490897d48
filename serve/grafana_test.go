package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = map[string]bool{"instance": true, "job": true}

// labelValuesQuery is a Grafana variable query, label_values(SELECTOR, LABEL).
var labelValuesQuery = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// registryFamilies is what the registry of a default serve gathers for a
// fixture that has every kind of series: each metric name with its labels.
func registryFamilies(t *testing.T) map[string]map[string]bool {
	t.Helper()
	snap := fixtureSnapshot(t)
	snap.Watch = model.WatchInfo{Mode: "polling", Interval: time.Second, Reason: "polling requested"}
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	srv.Observe([]model.Transition{{Time: fixedNow, ID: "A", From: model.StateRunning, To: model.StateDead}})
	fams, err := srv.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, fam := range fams {
		labels := map[string]bool{}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		out[fam.GetName()] = labels
	}
	return out
}

// dashboardQueries walks a Grafana dashboard and returns every PromQL
// query in it: the targets' expr fields, wherever panels nest, and the
// variables' queries (not a data source variable's plugin type). Each is
// keyed by where it was found.
func dashboardQueries(t *testing.T, v any, at string, out map[string]string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "datasource" {
			return // a data source variable: its query is a plugin type
		}
		for k, c := range x {
			where := at + "." + k
			switch s, isString := c.(string); {
			case k == "expr" && isString:
				out[where] = s
			case k == "query" && isString && strings.Contains(at, "templating"):
				out[where] = s
			case k == "query" && strings.Contains(at, "templating"):
				if q, ok := c.(map[string]any)["query"].(string); ok {
					out[where] = q
				}
			default:
				dashboardQueries(t, c, where, out)
			}
		}
	case []any:
		for i, c := range x {
			dashboardQueries(t, c, at+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// docs/grafana-dashboard.json asks only for series a default serve
// serves (no --per-node-metrics), with labels they carry and values that
// exist.
func TestGrafanaDashboardQueriesNameServedSeries(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("parse docs/grafana-dashboard.json: %v", err)
	}
	queries := map[string]string{}
	dashboardQueries(t, dash, "", queries)
	exprs := 0
	for where := range queries {
		if strings.HasSuffix(where, ".expr") {
			exprs++
		}
	}
	if exprs < 8 || len(queries) == exprs {
		t.Fatalf("found %d panel queries and %d variable queries; the walk does not reach them", exprs, len(queries)-exprs)
	}
	served, vocab := registryFamilies(t), labelVocabulary()
	for where, q := range queries {
		t.Run(where, func(t *testing.T) {
			if m := labelValuesQuery.FindStringSubmatch(q); m != nil {
				q = m[1]
				for _, s := range selectors(q) {
					if labels := served[s.name]; labels != nil && !labels[m[2]] && !targetLabels[m[2]] {
						t.Errorf("label_values asks %s for %q, a label it does not carry", s.name, m[2])
					}
				}
			}
			checkExpr(t, q, served, vocab, targetLabels)
		})
	}
}

// The walk and the label_values reading find what they must.
func TestDashboardQueriesFound(t *testing.T) {
	dash := map[string]any{
		"panels": []any{
			map[string]any{"targets": []any{map[string]any{"expr": "a"}}},
			map[string]any{"type": "row", "panels": []any{map[string]any{"targets": []any{map[string]any{"expr": "b"}}}}},
		},
		"templating": map[string]any{"list": []any{
			map[string]any{"query": map[string]any{"query": "label_values(c, x)"}},
			map[string]any{"query": "label_values(d{y=\"1\"}, z)"},
		}},
	}
	got := map[string]string{}
	dashboardQueries(t, dash, "", got)
	var all []string
	for _, q := range got {
		all = append(all, q)
	}
	joined := strings.Join(all, " ")
	for _, want := range []string{"a", "b", "label_values(c, x)", `label_values(d{y="1"}, z)`} {
		if !strings.Contains(joined, want) {
			t.Errorf("query %q not found in %v", want, all)
		}
	}
	if m := labelValuesQuery.FindStringSubmatch(`label_values(d{y="1"}, z)`); m == nil || m[1] != `d{y="1"}` || m[2] != "z" {
		t.Errorf("label_values read as %q", m)
	}
}
