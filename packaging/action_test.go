package packaging

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// buildBinary builds dispatchtop once for a test.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dispatchtop")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// actionTree is a .sessions tree with a live lead (a real sleep), a
// finished child, a dead child whose pid is gone and a blocked one.
func actionTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".sessions")
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sleep.Process.Pid))
	if err != nil {
		t.Skip("no /proc: the live lead's create time cannot be read")
	}
	// The create time from /proc: boot time plus the start ticks (field 22).
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ticks, _ := strconv.ParseFloat(fields[19], 64)
	uptime, _ := os.ReadFile("/proc/uptime")
	up, _ := strconv.ParseFloat(strings.Fields(string(uptime))[0], 64)
	started := float64(time.Now().UnixNano())/1e9 - up + ticks/100
	now := time.Now()
	write := func(rel, name, body string, age time.Duration) {
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	lead := filepath.Join(root, "S1", ".heartbeat")
	hb := func(pid int, parent, role, status string) string {
		return fmt.Sprintf(`{"pid": %d, "parent_heartbeat": %q, "role": %q, "started": %f, "status": %q}`, pid, parent, role, started, status)
	}
	write("S1", ".heartbeat", hb(sleep.Process.Pid, "", "lead", "running"), 5*time.Second)
	write("S1/plan/1", ".heartbeat", hb(999999, lead, "planner", "completed"), time.Hour)
	write("S1/code/2", ".heartbeat", hb(gone.Process.Pid, lead, "coder", "running"), time.Hour)
	write("S1/ask/3", ".heartbeat", hb(sleep.Process.Pid, lead, "asker", "running"), 5*time.Second)
	write("S1/ask/3", "blocked.json", `{"question": "ship | it?\nnow"}`, 5*time.Second)
	write("S2", ".heartbeat", hb(gone.Process.Pid, "", "lead", "running"), time.Hour)
	return root
}

// fixtureMatches are what actionTree holds, so that the comparison below
// is not one of zeros.
var fixtureMatches = map[string]int{"dead": 2, "dead,blocked": 3, "finished": 1, "none": 0, "state:running+flag:blocked": 1}

func exitCodeOf(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The action's check says what dispatchtop says: the same exit code, one
// error annotation per node that matches --fail-on (as many as dispatchtop
// counts), and a summary table; it applies --fail-on's grammar (terms,
// "+", kinds) itself, so this difference test holds the two together.
func TestActionCheckAnnotatesWhatFailOnMatches(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (GitHub's runners have it)")
	}
	bin := buildBinary(t)
	root := actionTree(t)
	count := regexp.MustCompile(`(\d+) node\(s\) match --fail-on`)
	for _, failOn := range []string{
		"dead", "dead,blocked", "dead+action:resume", "state:running+flag:blocked", "action:wait",
		"finished", "none", "kill_candidate", actionDefaultFailOn(t),
	} {
		t.Run(failOn, func(t *testing.T) {
			env := append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
			direct := exec.Command(bin, "--once", "--json", "--fail-on", failOn, root)
			direct.Env = env
			var stderr bytes.Buffer
			direct.Stderr = &stderr
			direct.Stdout = &bytes.Buffer{}
			wantCode := exitCodeOf(direct.Run())
			wantCount := 0
			if m := count.FindStringSubmatch(stderr.String()); m != nil {
				wantCount, _ = strconv.Atoi(m[1])
			}
			if want, ok := fixtureMatches[failOn]; ok && wantCount != want {
				t.Fatalf("dispatchtop counts %d nodes for --fail-on %s, the fixture has %d", wantCount, failOn, want)
			}

			summary := filepath.Join(t.TempDir(), "summary.md")
			out := filepath.Join(t.TempDir(), "doc.json")
			check := exec.Command(filepath.Join(repo, "action", "check.sh"))
			check.Env = append(env, "DISPATCHTOP="+bin, "ROOTS="+root, "FAIL_ON="+failOn, "OUTPUT="+out, "GITHUB_STEP_SUMMARY="+summary)
			stdout, err := check.Output()
			if code := exitCodeOf(err); code != wantCode {
				t.Fatalf("check.sh exit %d, dispatchtop %d (%v)", code, wantCode, err)
			}
			annotations := strings.Count(string(stdout), "::error title=dispatchtop: ")
			if annotations != wantCount {
				t.Errorf("%d annotations, dispatchtop counts %d:\n%s", annotations, wantCount, stdout)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
				if line != "" && !strings.HasPrefix(line, "::error title=dispatchtop: ") {
					t.Errorf("a line that is not an annotation: %q", line)
				}
			}
			sum, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(sum), "| nodes | sessions |") || strings.Count(string(sum), "\n| `") != wantCount {
				t.Errorf("summary does not table the %d matching nodes:\n%s", wantCount, sum)
			}
			if doc, err := os.ReadFile(out); err != nil || !bytes.Contains(doc, []byte(`"schema": "dispatchtop/v1"`)) {
				t.Errorf("the document was not kept at OUTPUT: %v", err)
			}
		})
	}
}

// A broken check (no tree) is exit 2 and one annotation saying why.
func TestActionCheckSaysWhyTheCheckItselfFailed(t *testing.T) {
	bin := buildBinary(t)
	check := exec.Command(filepath.Join(repo, "action", "check.sh"))
	check.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "DISPATCHTOP="+bin, "ROOTS="+t.TempDir(),
		"FAIL_ON=dead", "OUTPUT="+filepath.Join(t.TempDir(), "doc.json"))
	stdout, err := check.Output()
	if code := exitCodeOf(err); code != 2 || !strings.HasPrefix(string(stdout), "::error title=dispatchtop::") || !strings.Contains(string(stdout), "no tree found") {
		t.Errorf("exit %d, stdout %q: want 2 and an annotation saying no tree was found", code, stdout)
	}
}

// actionYAML is what the tests read of action.yml.
type actionYAML struct {
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) (actionYAML, string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(repo, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	if err := yaml.Unmarshal(body, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a, string(body)
}

func actionDefaultFailOn(t *testing.T) string {
	a, _ := readAction(t)
	return a.Inputs["fail-on"].Default
}

// action.yml is a composite action whose every run step names its shell,
// which names only inputs it declares, and whose fail-on default is
// dispatchtop's own (as `--help` prints it).
func TestActionMetadataHoldsTogether(t *testing.T) {
	a, body := readAction(t)
	if a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("runs.using %q with %d steps, want a composite action", a.Runs.Using, len(a.Runs.Steps))
	}
	for i, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %d runs a script without a shell: composite actions require one", i)
		}
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(body, -1) {
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	help, err := exec.Command(buildBinary(t), "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(help)), " ")
	if want := `(default "` + a.Inputs["fail-on"].Default + `")`; !strings.Contains(flat, want) {
		t.Errorf("action.yml's fail-on default %q is not dispatchtop's: --help says\n%s", a.Inputs["fail-on"].Default, help)
	}
}

// docs/ci.md states the default --fail-on; it is the action's, which the
// test above holds to dispatchtop's.
func TestCIDocStatesTheDefaultFailOn(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "The default,\n`" + actionDefaultFailOn(t) + "`"; !strings.Contains(string(doc), want) {
		t.Errorf("docs/ci.md does not state the default --fail-on %q", actionDefaultFailOn(t))
	}
}
