package main

// -source claude: a Claude Code home whose one session (this process,
// alive for the whole run) has its transcript appended to at each rate.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// claudeSession is the session's id in the home.
const claudeSession = "b3c1d2e4-5f60-4a7b-8c9d-0e1f2a3b4c5d"

// claudeHome writes a Claude Code home: this process's session, its team
// of members in-process teammates and a background job; its writer
// appends lines to the session's transcript (projects/<slug>/<id>.jsonl,
// each line as long as a real assistant turn's), its changes make member
// i finished (isActive false).
func claudeHome(home string, members int) (fixture, error) {
	fx := fixture{root: "claude:" + home, close: func() {}}
	pid := os.Getpid()
	start, err := claudeProcStart(pid)
	if err != nil {
		return fx, err
	}
	cwd := filepath.Join(filepath.Dir(home), "webapp")
	now := time.Now()
	writeJSON := func(rel string, v any) error {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	if err := writeJSON("sessions/"+strconv.Itoa(pid)+".json", map[string]any{"pid": pid, "procStart": start,
		"startedAt": now.UnixMilli(), "sessionId": claudeSession, "cwd": cwd, "kind": "interactive", "entrypoint": "cli",
		"version": "2.1.278", "status": "busy", "updatedAt": now.UnixMilli(), "statusUpdatedAt": now.UnixMilli(), "name": "bench"}); err != nil {
		return fx, err
	}
	if err := writeJSON("jobs/0a1b2c3d/state.json", map[string]any{"state": "working", "sessionId": claudeSession, "name": "bench job",
		"cwd": cwd, "updatedAt": now.UTC().Format(time.RFC3339Nano)}); err != nil {
		return fx, err
	}
	done := map[int]bool{}
	writeTeam := func() error {
		list := []map[string]any{{"agentId": "team-lead@bench", "name": "team-lead", "agentType": "team-lead"}}
		for m := range members {
			list = append(list, map[string]any{"agentId": fmt.Sprintf("m%02d@bench", m), "name": fmt.Sprintf("member-%02d", m),
				"agentType": "general-purpose", "joinedAt": now.UnixMilli(), "tmuxPaneId": "in-process", "backendType": "in-process",
				"isActive": !done[m], "cwd": cwd})
		}
		return writeJSON("teams/bench/config.json", map[string]any{"name": "bench", "leadSessionId": claudeSession, "members": list})
	}
	if err := writeTeam(); err != nil {
		return fx, err
	}
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(cwd)
	transcript := filepath.Join(home, "projects", slug, claudeSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o755); err != nil {
		return fx, err
	}
	f, err := os.OpenFile(transcript, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fx, err
	}
	fx.close = func() { f.Close() }
	text := strings.Repeat("the work goes on; ", 60)
	fx.write = func(rate, window int, stop <-chan struct{}) error {
		return every(rate, stop, func(n int) error {
			line, _ := json.Marshal(map[string]any{"type": "assistant", "sessionId": claudeSession, "cwd": cwd,
				"uuid": fmt.Sprintf("u-%d-%d", window, n), "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
				"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": text}}}})
			_, err := f.Write(append(line, '\n'))
			return err
		})
	}
	fx.change = func(i int) error {
		if i >= members {
			return fmt.Errorf("change %d: only %d members", i, members)
		}
		done[i] = true
		return writeTeam()
	}
	return fx, nil
}

// claudeProcStart is pid's procStart as Claude Code writes it on Linux:
// field 22 of /proc/<pid>/stat.
func claudeProcStart(pid int) (string, error) {
	if runtime.GOOS != "linux" {
		return "", fmt.Errorf("-source claude: Linux only")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return f[22-3], nil
}
