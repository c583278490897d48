package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dispatchtop/dispatchtop/model"
)

// ruleFile is the shape of a Prometheus rules file, as far as it is read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string            `yaml:"alert"`
			Record string            `yaml:"record"`
			Expr   string            `yaml:"expr"`
			For    string            `yaml:"for"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// selector is one series selector of an expression: the metric name and
// the label matchers {label op value}.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

var (
	promString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promRange  = regexp.MustCompile(`\[[^\]]*\]`)
	// grouping lists name labels, not series: by (a, b), on (x) ...
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")`)
)

// promKeywords are the operators and aggregations of PromQL that read as
// identifiers; function calls are recognised by their '('.
var promKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
	"inf": true, "nan": true,
}

// selectors finds the series an expression names: identifiers that are
// neither keywords, function names, numbers nor label names inside braces.
func selectors(expr string) []selector {
	// Matchers first, while strings are still whole; then blank out braces,
	// strings, ranges and grouping lists so only names remain.
	var out []selector
	braces := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	rest := braces.ReplaceAllStringFunc(expr, func(m string) string {
		sub := braces.FindStringSubmatch(m)
		s := selector{name: sub[1]}
		for _, mm := range promMatcher.FindAllStringSubmatch(sub[2], -1) {
			s.matchers = append(s.matchers, matcher{label: mm[1], op: mm[2], value: strings.Trim(mm[3], `"`)})
		}
		if s.name == "" {
			for _, m := range s.matchers {
				if m.label == "__name__" && m.op == "=" {
					s.name = m.value
				}
			}
		}
		out = append(out, s)
		return " "
	})
	rest = promString.ReplaceAllString(rest, " ")
	rest = promRange.ReplaceAllString(rest, " ")
	rest = promGrouping.ReplaceAllString(rest, " ")
	for _, loc := range promIdent.FindAllStringIndex(rest, -1) {
		word := rest[loc[0]:loc[1]]
		after := strings.TrimLeft(rest[loc[1]:], " \t\n")
		if promKeywords[strings.ToLower(word)] || strings.HasPrefix(after, "(") {
			continue
		}
		if loc[0] > 0 && (rest[loc[0]-1] >= '0' && rest[loc[0]-1] <= '9' || rest[loc[0]-1] == '.') {
			continue // the exponent or unit of a number: 1e3, 5m
		}
		out = append(out, selector{name: word})
	}
	return out
}

// servedSeries scrapes /metrics, as serve answers by default (without
// PerNodeMetrics), of a fixture whose snapshot has every kind of series (a
// transition observed, a watch mode, a blocked node) and returns each
// metric name with the label names it carries.
func servedSeries(t *testing.T) map[string]map[string]bool {
	t.Helper()
	snap := fixtureSnapshot(t)
	snap.Watch = model.WatchInfo{Mode: "polling", Interval: time.Second, Reason: "polling requested"}
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	srv.Observe([]model.Transition{{Time: fixedNow, ID: "A", From: model.StateRunning, To: model.StateDead}})
	out := map[string]map[string]bool{}
	for name, fam := range scrape(t, srv.Handler(), nil) {
		labels := map[string]bool{}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		out[name] = labels
	}
	return out
}

// labelVocabulary is what a matcher on one of these labels may compare
// against: the names the model knows.
func labelVocabulary() map[string][]string {
	v := map[string][]string{}
	for _, s := range model.States {
		v["state"] = append(v["state"], string(s))
	}
	for _, f := range model.Flags {
		v["flag"] = append(v["flag"], string(f))
	}
	for _, a := range []model.Action{model.ActionNone, model.ActionWait, model.ActionAnswer, model.ActionKill,
		model.ActionResume, model.ActionMerge, model.ActionSurface, model.ActionCompact} {
		v["action"] = append(v["action"], string(a))
	}
	v["mode"] = []string{"fsnotify", "polling", "mixed"}
	v["kind"] = []string{KindAppeared, KindVanished, KindState, KindFlags}
	return v
}

// checkExpr checks that a PromQL expression names at least one series, only
// series that are served, matches only labels they carry (or the target
// labels Prometheus adds, extraLabels) and compares state, flag, action and
// mode labels only with values that exist.
func checkExpr(t *testing.T, expr string, served map[string]map[string]bool, vocab map[string][]string, extraLabels map[string]bool) {
	t.Helper()
	sels := selectors(expr)
	if len(sels) == 0 {
		t.Errorf("expr %q names no series", expr)
		return
	}
	for _, s := range sels {
		labels, ok := served[s.name]
		if !ok {
			t.Errorf("expr %q names %q, which /metrics does not serve", expr, s.name)
			continue
		}
		for _, m := range s.matchers {
			if !labels[m.label] && !extraLabels[m.label] {
				t.Errorf("%s has no label %q", s.name, m.label)
			}
			words, known := vocab[m.label]
			if !known {
				continue
			}
			values := []string{m.value}
			if m.op == "=~" || m.op == "!~" {
				values = strings.Split(m.value, "|")
			}
			for _, v := range values {
				if !slices.Contains(words, v) {
					t.Errorf("%s{%s%s%q}: %q is not a %s", s.name, m.label, m.op, m.value, v, m.label)
				}
			}
		}
	}
}

// docs/alerts.yml names only series that /metrics serves, matches only
// labels those series carry, and compares state, flag, action and mode
// labels only with values that exist (issue 7).
func TestAlertRulesNameServedSeries(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules ruleFile
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("parse docs/alerts.yml: %v", err)
	}
	served := servedSeries(t)
	// up is the series Prometheus itself makes of every scrape.
	served["up"] = map[string]bool{"job": true, "instance": true}
	vocab := labelVocabulary()
	wantAlerts := map[string]bool{"DispatchtopDeadNodes": false, "DispatchtopKillCandidate": false, "DispatchtopBlockedTooLong": false,
		"DispatchtopExporterDown": false, "DispatchtopSnapshotStale": false}
	count := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			count++
			t.Run(r.Alert+r.Record, func(t *testing.T) {
				if strings.TrimSpace(r.Expr) == "" {
					t.Fatal("no expr")
				}
				if r.For != "" {
					if _, err := time.ParseDuration(r.For); err != nil {
						t.Errorf("for: %v", err)
					}
				}
				checkExpr(t, r.Expr, served, vocab, nil)
			})
			if _, ok := wantAlerts[r.Alert]; ok {
				wantAlerts[r.Alert] = true
			}
		}
	}
	for name, found := range wantAlerts {
		if !found {
			t.Errorf("docs/alerts.yml lacks %s", name)
		}
	}
	if count == 0 {
		t.Fatal("docs/alerts.yml holds no rule")
	}
}

// The expression reader itself: what it must find and what it must skip.
func TestSelectors(t *testing.T) {
	tests := []struct {
		expr string
		want []string // name{label op value,...}
	}{
		{`sum by (instance, session) (dispatchtop_nodes{state="dead"}) > 0`, []string{`dispatchtop_nodes{state="dead"}`}},
		{`dispatchtop_blocked_seconds > 15 * 60`, []string{`dispatchtop_blocked_seconds{}`}},
		{`rate(dispatchtop_transitions_total{kind="state"}[5m]) > 1e3`, []string{`dispatchtop_transitions_total{kind="state"}`}},
		{`a{x=~"p|q"} and on (job) b`, []string{`a{x=~"p|q"}`, `b{}`}},
		{`{__name__="c", y!="z"}`, []string{`c{__name__="c",y!="z"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			var got []string
			for _, s := range selectors(tt.expr) {
				var ms []string
				for _, m := range s.matchers {
					ms = append(ms, m.label+m.op+`"`+m.value+`"`)
				}
				got = append(got, s.name+"{"+strings.Join(ms, ",")+"}")
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// With promtool installed (on PATH, or in bin/tools by `make promtool`),
// docs/alerts.yml passes `promtool check rules` and its unit tests,
// docs/alerts_test.yml (the exporter-down and stale-snapshot rules fire
// when they should, and only then).
func TestAlertRulesPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		promtool, err = filepath.Abs(filepath.Join("..", "bin", "tools", "promtool"))
		if _, serr := os.Stat(promtool); err != nil || serr != nil {
			t.Skip("promtool is not installed (make promtool puts it in bin/tools)")
		}
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = filepath.Join("..", "docs")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
