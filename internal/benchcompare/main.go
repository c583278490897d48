// Command benchcompare puts `dispatchtop --once --json` against the floor
// (SPEC §8): `find ROOT -name .heartbeat` and a naive Python scan of the
// same generated tree, run interleaved for N rounds; it prints the medians,
// the ratios and the RSS of dispatchtop. Given a TeaParty checkout's
// heartbeat module (-teaparty), TeaParty's own functions run as a contender
// too; the Python interpreter's start alone (-python names which
// interpreter) is the last row, the floor of both Python contenders. The
// tree is made in a temporary directory and removed afterwards. Its
// heartbeats name this process, so every pid is alive while the
// contenders run.
//
//	go run ./internal/benchcompare -bin bin/dispatchtop -sessions 1000 -per-session 10 -rounds 7 \
//		-teaparty ../teaparty/teaparty/bridge/state/heartbeat.py
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/benchrun"
)

// naiveScan is what a user would write in a few minutes: walk the tree,
// read each heartbeat, stat its mtime and check its pid.
const naiveScan = `
import json, os, sys
root = sys.argv[1]
nodes = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if d not in (".git", "node_modules")]
    if ".heartbeat" not in filenames:
        continue
    path = os.path.join(dirpath, ".heartbeat")
    try:
        with open(path) as f:
            hb = json.load(f)
        mtime = os.stat(path).st_mtime
    except (OSError, ValueError):
        continue
    alive = False
    pid = hb.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
            alive = True
        except PermissionError:
            alive = True
        except OSError:
            pass
    nodes.append({"dir": dirpath, "status": hb.get("status"), "mtime": mtime, "alive": alive})
json.dump({"nodes": nodes}, sys.stdout)
`

// teapartyScan is the scan TeaParty's recovery makes with its own
// functions, loaded from the module given: walk the tree, ask
// is_heartbeat_stale of every heartbeat and scan_children of every
// registry. The module needs no package of its own (psutil is optional to
// it: without, its pid check is os.kill).
const teapartyScan = `
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("heartbeat", sys.argv[1])
hb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hb)
root = sys.argv[2]
stale = 0
kinds = {"completed": 0, "dead": 0, "live": 0}
for dirpath, dirnames, filenames in os.walk(root):
    if ".heartbeat" in filenames and hb.is_heartbeat_stale(os.path.join(dirpath, ".heartbeat")):
        stale += 1
    if ".children" in filenames:
        for kind, children in hb.scan_children(os.path.join(dirpath, ".children")).items():
            kinds[kind] += len(children)
json.dump({"stale": stale, "children": kinds}, sys.stdout)
`

type contender struct {
	name    string
	argv    []string
	missing string // why it cannot run, when it cannot
	times   []time.Duration
	rssKiB  []int64
	ok      func(code int) bool
}

func main() {
	bin := flag.String("bin", "bin/dispatchtop", "the dispatchtop binary to measure")
	sessions := flag.Int("sessions", 1000, "sessions in the generated tree")
	perSession := flag.Int("per-session", 10, "nodes per session")
	depth := flag.Int("depth", 3, "levels per session")
	rounds := flag.Int("rounds", 7, "rounds; each runs every contender once, interleaved")
	teaparty := flag.String("teaparty", "", "TeaParty's teaparty/bridge/state/heartbeat.py, to run its own functions as a contender")
	python := flag.String("python", "python3", "the Python that runs the Python contenders")
	flag.Parse()
	if err := run(*bin, *teaparty, *python, *sessions, *perSession, *depth, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func run(bin, teaparty, python string, sessions, perSession, depth, rounds int) error {
	if rounds < 1 {
		return fmt.Errorf("-rounds %d: need at least 1", rounds)
	}
	r, err := benchrun.Prepare(bin, "benchcompare-", sessions, perSession, depth)
	if err != nil {
		return err
	}
	defer r.Remove()
	binAbs, tmp, root, took := r.Bin, r.Dir, r.Root, r.Took
	fmt.Printf("tree: %d nodes (%d sessions × %d, %d deep), generated in %s; %d rounds, medians\n",
		sessions*perSession, sessions, perSession, depth, took.Round(time.Millisecond), rounds)
	script := filepath.Join(tmp, "naive_scan.py")
	if err := os.WriteFile(script, []byte(naiveScan), 0o644); err != nil {
		return fmt.Errorf("write the python scan: %w", err)
	}
	exitOK := func(code int) bool { return code == 0 }
	// --fail-on none: the exit code says nothing about the tree, so any
	// code but 0 is a failure of the run.
	dt := &contender{name: "dispatchtop --once --json", ok: exitOK,
		argv: []string{binAbs, "--once", "--json", "--fail-on", "none", root}}
	find := &contender{name: "find ROOT -name .heartbeat", ok: exitOK, argv: []string{"find", root, "-name", ".heartbeat"}}
	py := &contender{name: "naive python scan", ok: exitOK, argv: []string{python, script, root}}
	tpScript := filepath.Join(tmp, "teaparty_scan.py")
	if err := os.WriteFile(tpScript, []byte(teapartyScan), 0o644); err != nil {
		return fmt.Errorf("write the TeaParty scan: %w", err)
	}
	tp := &contender{name: "TeaParty's own functions", ok: exitOK, argv: []string{python, tpScript, teaparty, root}}
	// The interpreter's start alone: a Python contender's floor, which a
	// version manager's shim (pyenv's) can make ten times what the
	// interpreter itself takes.
	pyStart := &contender{name: "python start, no scan", ok: exitOK, argv: []string{python, "-c", "print()"}}
	contenders := []*contender{dt, find, tp, py, pyStart}
	for _, c := range contenders {
		if _, err := exec.LookPath(c.argv[0]); err != nil {
			c.missing = c.argv[0] + " not found"
		}
	}
	if teaparty == "" {
		tp.missing = "-teaparty names no heartbeat.py of a TeaParty checkout"
	} else if _, err := os.Stat(teaparty); err != nil {
		return fmt.Errorf("-teaparty: %w", err)
	} else if tp.missing == "" && exec.Command(python, "-c", "import psutil").Run() != nil {
		// TeaParty imports psutil at every pid check and falls back to
		// os.kill: without it, each check pays for a failed import.
		tp.name += ", no psutil"
	}
	if dt.missing != "" {
		return fmt.Errorf("binary %s: %s", bin, dt.missing)
	}
	// One warm-up round: the first run pays for a cold dentry cache.
	for round := -1; round < rounds; round++ {
		for _, c := range contenders {
			if c.missing != "" {
				continue
			}
			d, rss, err := timeOnce(c, filepath.Join(tmp, "config"))
			if err != nil {
				return err
			}
			if round >= 0 {
				c.times = append(c.times, d)
				c.rssKiB = append(c.rssKiB, rss)
			}
		}
	}
	dtMed, findMed := median(dt.times), median(find.times)
	fmt.Printf("%-36s %10s %14s %10s %12s\n", "contender", "median ms", "÷ dispatchtop", "÷ find", "max RSS MiB")
	for _, c := range contenders {
		if c.missing != "" {
			fmt.Printf("%-36s %s\n", c.name, "not run: "+c.missing)
			continue
		}
		m := median(c.times)
		vsFind := "-"
		if find.missing == "" {
			vsFind = fmt.Sprintf("%.2f", ratio(m, findMed))
		}
		fmt.Printf("%-36s %10.1f %14.2f %10s %12.1f\n", c.name, ms(m), ratio(m, dtMed), vsFind, float64(slices.Max(c.rssKiB))/1024)
	}
	return nil
}

// timeOnce runs c once, its output discarded (counted, so a run that prints
// nothing is caught), and returns its wall time and peak RSS.
func timeOnce(c *contender, configHome string) (time.Duration, int64, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configHome) // no config: the defaults
	var out countWriter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", c.name, err)
	}
	if !c.ok(code) {
		return 0, 0, fmt.Errorf("%s: exit %d: %.300s", c.name, code, stderr.String())
	}
	if out == 0 {
		return 0, 0, fmt.Errorf("%s: printed nothing", c.name)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // KiB on Linux; int32 on 32-bit ports
	}
	return d, rss, nil
}

type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) { *w += countWriter(len(p)); return len(p), nil }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
