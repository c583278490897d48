package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func registryLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("registry line %q is not whole JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRegisterAppendsOneActiveLineToTheParentsChildren(t *testing.T) {
	tests := []struct {
		name     string
		existing string // registry content before, with %s for the parent dir
		taskID   string
		wantNew  bool
		wantLen  int
		wantTask any
	}{
		{name: "first child creates the registry", taskID: "", wantNew: true, wantLen: 1, wantTask: nil},
		{name: "task id is a string when given", taskID: "t-9", wantNew: true, wantLen: 1, wantTask: "t-9"},
		{
			name:     "another child is appended after existing lines",
			existing: `{"heartbeat": "%s/other/.heartbeat", "team": "x", "task_id": null, "status": "active"}` + "\n",
			wantNew:  true, wantLen: 2, wantTask: nil,
		},
		{
			name:     "already registered by absolute path: left alone",
			existing: `{"heartbeat": "%s/kid/.heartbeat", "team": "c", "task_id": null, "status": "active"}` + "\n",
			wantNew:  false, wantLen: 1, wantTask: nil,
		},
		{
			name:     "already registered by relative path: left alone",
			existing: "garbage line\n" + `{"heartbeat": "kid/.heartbeat", "team": "c", "task_id": null, "status": "completed"}` + "\n",
			wantNew:  false, wantLen: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parentDir := t.TempDir()
			registry := filepath.Join(parentDir, ".children")
			if tt.existing != "" {
				body := tt.existing
				if strings.Contains(body, "%s") {
					body = fmt.Sprintf(body, parentDir)
				}
				if err := os.WriteFile(registry, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			child := filepath.Join(parentDir, "kid", ".heartbeat")
			got, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: child, Team: "c", TaskID: tt.taskID})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantNew {
				t.Errorf("registered = %v, want %v", got, tt.wantNew)
			}
			if tt.wantLen < 0 {
				data, _ := os.ReadFile(registry)
				if string(data) != tt.existing {
					t.Errorf("registry changed:\n%s", data)
				}
				return
			}
			lines := registryLines(t, registry)
			if len(lines) != tt.wantLen {
				t.Fatalf("registry has %d lines, want %d", len(lines), tt.wantLen)
			}
			last := lines[len(lines)-1]
			if tt.wantNew {
				if last["heartbeat"] != child || last["team"] != "c" || last["status"] != "active" || last["task_id"] != tt.wantTask {
					t.Errorf("appended line = %v", last)
				}
			}
		})
	}
}

func TestRegisterConcurrentAppendsStayWhole(t *testing.T) {
	parentDir := t.TempDir()
	const children = 64
	var wg sync.WaitGroup
	errs := make(chan error, children)
	for i := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := filepath.Join(parentDir, fmt.Sprintf("kid-%03d", i), ".heartbeat")
			if _, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: child, Team: strings.Repeat("t", 200)}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	lines := registryLines(t, filepath.Join(parentDir, ".children"))
	if len(lines) != children {
		t.Errorf("registry has %d lines, want %d", len(lines), children)
	}
}

func TestRegisterRefusesALineOver4KiB(t *testing.T) {
	parentDir := t.TempDir()
	_, err := Register(filepath.Join(parentDir, ".heartbeat"), Registration{Heartbeat: filepath.Join(parentDir, "k", ".heartbeat"), Team: strings.Repeat("x", 5000)})
	if err == nil || !strings.Contains(err.Error(), ".children") {
		t.Errorf("err = %v, want a refusal naming the registry", err)
	}
}
