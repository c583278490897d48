package packaging

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// unitDirectives reads a systemd unit's Key=Value lines (every value of a
// key that repeats).
func unitDirectives(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		d[k] = append(d[k], v)
	}
	return d
}

// The unit runs serve sandboxed, with the roots read-only, and every
// variable it sets is one serve reads; systemd's own check passes where
// systemd-analyze is installed.
func TestSystemdUnitIsHardenedAndNamesServesVariables(t *testing.T) {
	unit := filepath.Join("dispatchtop-serve.service")
	d := unitDirectives(t, unit)
	for key, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "read-only", "PrivateTmp": "yes",
		"DynamicUser": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
	} {
		if got := d[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%v, want %q", key, got, want)
		}
	}
	if len(d["ReadOnlyPaths"]) == 0 {
		t.Errorf("no ReadOnlyPaths: the roots must be read-only to the service")
	}
	exec0 := strings.Fields(d["ExecStart"][0])
	if len(exec0) < 2 || exec0[0] != "/usr/bin/dispatchtop" || exec0[1] != "serve" {
		t.Fatalf("ExecStart=%v, want /usr/bin/dispatchtop serve", exec0)
	}

	bin := filepath.Join(t.TempDir(), "dispatchtop")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	help, err := exec.Command(bin, "serve", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range d["Environment"] {
		name, _, _ := strings.Cut(env, "=")
		flag := "--" + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "DISPATCHTOP_")), "_", "-")
		if !strings.HasPrefix(name, "DISPATCHTOP_") || !strings.Contains(string(help), flag+" ") {
			t.Errorf("Environment=%s: serve has no flag %s for it", env, flag)
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's syntax is not checked by systemd")
	}
	body, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "dispatchtop-serve.service")
	if err := os.WriteFile(local, []byte(strings.ReplaceAll(string(body), "/usr/bin/dispatchtop", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", "--man=no", local).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
