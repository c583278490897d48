package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// --once --remote reads every host once: one document of the fleet, each
// host's sessions under its host row, and --once's exit codes: 1 when a
// node of any host matches --fail-on, 2 when a host does not answer
// (unless --allow-missing, while another does).
func TestOnceRemoteIsOneDocumentWithOnceExitCodes(t *testing.T) {
	env := []string{"DISPATCHTOP_TOKEN=fleet-token"}
	t.Setenv("DISPATCHTOP_TOKEN", "fleet-token")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a := startServe(t, env, serveTree(t))
	b := startServe(t, env, serveTree(t))
	fleet := "host-a=" + a.url + ",host-b=" + b.url
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Execute(args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errs := run("--remote", fleet, "--once", "--json", "--fail-on", "none")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0; stderr %q", code, errs)
	}
	var doc struct {
		Sessions []struct {
			ID       string `json:"id"`
			Children []struct {
				ID string `json:"id"`
			} `json:"children"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if len(doc.Sessions) != 2 || doc.Sessions[0].ID != "host-a" || doc.Sessions[1].ID != "host-b" ||
		len(doc.Sessions[0].Children) != 1 || doc.Sessions[0].Children[0].ID != "host-a/S1" {
		t.Errorf("the fleet document's rows: %+v", doc.Sessions)
	}

	// The dead coder of each host matches "dead".
	if code, _, errs = run("--remote", fleet, "--once", "--fail-on", "dead"); code != ExitFound || !strings.Contains(errs, "2 node(s) match --fail-on dead") {
		t.Errorf("--fail-on dead: exit %d, stderr %q; want 1 naming 2 nodes", code, errs)
	}

	b.stop(t)
	if code, _, errs = run("--remote", fleet, "--once", "--fail-on", "none"); code != ExitUsage || !strings.Contains(errs, "host-b") {
		t.Errorf("a host down: exit %d, stderr %q; want 2 naming host-b", code, errs)
	}
	code, out, errs = run("--remote", fleet, "--once", "--fail-on", "none", "--allow-missing")
	if code != ExitOK || !strings.Contains(out, "unreachable") {
		t.Errorf("a host down, --allow-missing: exit %d, stderr %q; want 0 with the host's row unreachable:\n%s", code, errs, out)
	}
}

// --once --metrics FILE writes serve's dispatchtop_* series in the text
// format (the runtime's left out: node_exporter has its own), replacing
// the file whole.
func TestOnceMetricsWritesTheTextfileFormat(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := serveTree(t)
	file := filepath.Join(t.TempDir(), "dispatchtop.prom")
	if err := os.WriteFile(file, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Execute([]string{"--once", "--fail-on", "none", "--metrics", file, root}, strings.NewReader(""), &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the file is not the text format: %v", err)
	}
	for _, want := range []string{"dispatchtop_nodes", "dispatchtop_snapshot_timestamp_seconds", "dispatchtop_heartbeat_age_max_seconds"} {
		if families[want] == nil {
			t.Errorf("no %s in the file", want)
		}
	}
	for name := range families {
		if !strings.HasPrefix(name, "dispatchtop_") {
			t.Errorf("series %s: only dispatchtop_* belong in a textfile", name)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".dispatchtop.prom.*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}
