package scanner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// recordStore is a source for tests only: a directory holding a marker
// file and records.json, an array of records. It proves the seam: nothing
// of the scanner, the watcher or the classifier knows it.
type recordStore struct{}

const (
	recordKind   sources.Kind = "records"
	recordMarker              = ".records-store"
	recordFile                = "records.json"
)

type record struct {
	ID      string  `json:"id"`
	Parent  string  `json:"parent"` // a record id, or a native heartbeat's path when it starts with '/'
	PID     int     `json:"pid"`
	Started float64 `json:"started"`
	Status  string  `json:"status"`
	Beat    float64 `json:"beat"` // unix seconds
}

func (recordStore) Kind() sources.Kind { return recordKind }

func (recordStore) Detect(path string) bool {
	_, err := os.Stat(filepath.Join(path, recordMarker))
	return err == nil
}

func (recordStore) key(path, id string) string { return path + "#" + id }

func (s recordStore) Read(path string, _ time.Time) sources.Facts {
	file := filepath.Join(path, recordFile)
	data, err := os.ReadFile(file)
	var recs []record
	if err == nil {
		err = json.Unmarshal(data, &recs)
	}
	if err != nil {
		return sources.Facts{Problems: []model.Problem{{Path: file, Error: "read " + file + ": " + err.Error()}}}
	}
	var facts sources.Facts
	for _, r := range recs {
		parent := ""
		switch {
		case strings.HasPrefix(r.Parent, "/"):
			parent = r.Parent
		case r.Parent != "":
			parent = s.key(path, r.Parent)
		}
		sec := int64(r.Beat)
		facts.Nodes = append(facts.Nodes, &model.Node{
			Source: string(recordKind), ID: r.ID, HeartbeatPath: s.key(path, r.ID), HasHeartbeat: true,
			Heartbeat: &model.Heartbeat{PID: r.PID, Started: r.Started, Status: r.Status, Role: "agent",
				ParentHeartbeat: parent, HasParentField: true},
			BeatMtime: time.Unix(sec, int64((r.Beat-float64(sec))*1e9)),
			Rare:      &model.Rare{SourceFields: []model.Field{{Name: "record", Value: r.ID}}},
		})
	}
	return facts
}

func (recordStore) WatchPaths(path string) []string {
	return []string{filepath.Join(path, recordFile), filepath.Join(path, recordFile+"-wal")}
}

func (recordStore) Thresholds() model.Thresholds { return model.DefaultThresholds() }

// writeRecords replaces records.json the way a careful writer does: a
// temporary file renamed over it.
func writeRecords(t *testing.T, dir string, recs []record) {
	t.Helper()
	data, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, recordFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, recordFile)); err != nil {
		t.Fatal(err)
	}
}

// newRecordStore makes a store dir with its marker.
func newRecordStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, recordMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// selfRecord is a record of this test process: alive, beating now.
func selfRecord(id, parent, status string) record {
	info := liveness.SystemProbe{}.Lookup(os.Getpid())
	return record{ID: id, Parent: parent, PID: os.Getpid(), Started: float64(info.CreateTime.UnixNano()) / 1e9,
		Status: status, Beat: float64(time.Now().UnixNano()) / 1e9}
}

// deadPID is the pid of a process that ran and was reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return pid
}

func TestSourceColdScanLinksRecordsAndClassifiesThemAsNativeNodes(t *testing.T) {
	native := t.TempDir()
	leadHB := node(t, native, "lead", "")
	store := newRecordStore(t)
	dead := selfRecord("ghost", "boss", "running")
	dead.PID, dead.Started = deadPID(t), 1.7e9
	dead.Beat -= 3600 // past every grace: a gone pid is dead
	writeRecords(t, store, []record{
		selfRecord("boss", "", "running"),
		selfRecord("worker", "boss", "running"),
		dead,
		selfRecord("helper", leadHB, "running"), // a record under a native node
	})
	snap, err := Scan(Options{Roots: []string{native, store}, Sources: []sources.Source{recordStore{}}})
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Base(store) + "/"
	tests := []struct {
		id, parent string
		state      model.State
		source     string
	}{
		{prefix + "boss", "", model.StateRunning, "records"},
		{prefix + "worker", prefix + "boss", model.StateRunning, "records"},
		{prefix + "ghost", prefix + "boss", model.StateDead, "records"},
		{prefix + "helper", filepath.Base(native) + "/lead", model.StateRunning, "records"},
		{filepath.Base(native) + "/lead", "", model.StateRunning, ""},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			n := mustNode(t, snap, tc.id)
			if n.ParentID != tc.parent || n.State != tc.state || n.Source != tc.source {
				t.Errorf("parent %q state %s source %q; want %q %s %q (%s)", n.ParentID, n.State, n.Source,
					tc.parent, tc.state, tc.source, n.Reason)
			}
		})
	}
	if got := strings.Join(snap.RootSources, ","); got != "native,records" {
		t.Errorf("root sources %q, want native,records", got)
	}
}

func TestSourceKindPrefixNamesTheSource(t *testing.T) {
	store := t.TempDir() // no marker: only the prefix makes it a store
	writeRecords(t, store, []record{selfRecord("boss", "", "running")})
	snap, err := Scan(Options{Roots: []string{"records:" + store}, Sources: []sources.Source{recordStore{}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := mustNode(t, snap, "boss"); n.Source != "records" {
		t.Errorf("source %q, want records", n.Source)
	}

	_, err = Scan(Options{Roots: []string{"nosuch:" + store}, Sources: []sources.Source{recordStore{}}})
	if err == nil || !strings.Contains(err.Error(), `unknown source "nosuch"`) || !strings.Contains(err.Error(), "native, records") {
		t.Errorf("unknown KIND: err %v, want it to name the known sources", err)
	}
}

func TestSourceBrokenStoreIsAProblemNamingTheFile(t *testing.T) {
	store := newRecordStore(t)
	if err := os.WriteFile(filepath.Join(store, recordFile), []byte(`[{"id": "boss",`), 0o644); err != nil {
		t.Fatal(err)
	}
	native := t.TempDir()
	node(t, native, "lead", "")
	snap, err := Scan(Options{Roots: []string{native, store}, Sources: []sources.Source{recordStore{}}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasProblem(snap.Problems, filepath.Join(store, recordFile), "unexpected end of JSON input") {
		t.Errorf("problems %v, want one naming %s", snap.Problems, recordFile)
	}
	if snap.NodeCount() != 1 {
		t.Errorf("nodes %v, want the native lead alone", ids(snap))
	}
}

func TestSourceWatcherSeesARecordChangeAndABrokenStore(t *testing.T) {
	store := newRecordStore(t)
	writeRecords(t, store, []record{selfRecord("boss", "", "running"), selfRecord("worker", "boss", "running")})
	// Polling an hour apart: only an fsnotify event can bring the change.
	w, err := NewWatcher(Options{Roots: []string{store}, Sources: []sources.Source{recordStore{}}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = w.Run(ctx) }()
	if n := mustNode(t, w.Snapshot(), "worker"); n.State != model.StateRunning {
		t.Fatalf("worker %s before the change, want running", n.State)
	}
	writeRecords(t, store, []record{selfRecord("boss", "", "running"), selfRecord("worker", "boss", "completed")})
	waitFor(t, w, "the completed worker", func(snap *model.Snapshot) bool {
		n := snap.Node("worker")
		if n == nil || n.Status() != "completed" {
			return false
		}
		if n.ParentID != "boss" || n.Source != "records" {
			t.Errorf("worker under %q from %q, want boss, records", n.ParentID, n.Source)
		}
		return true
	})

	file := filepath.Join(store, recordFile)
	if err := os.WriteFile(file, []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, w, "a problem naming "+file, func(snap *model.Snapshot) bool {
		return hasProblem(snap.Problems, file, "unexpected end of JSON input") && snap.NodeCount() == 0
	})
}

// waitFor reads updates until one satisfies ok.
func waitFor(t *testing.T, w *Watcher, what string, ok func(*model.Snapshot) bool) {
	t.Helper()
	hang := time.After(5 * time.Second) // a hang guard, not a timing
	for {
		select {
		case u := <-w.Updates():
			if ok(u.Snapshot) {
				return
			}
		case <-hang:
			t.Fatal(fmt.Sprintf("no update showed %s; last problems %v", what, w.Snapshot().Problems))
		}
	}
}

func TestSourcePrepareRootsPicksEachRootsSource(t *testing.T) {
	native := t.TempDir()
	nested := filepath.Join(native, "bus")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, recordMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	colon := filepath.Join(native, "records:x") // a directory whose name looks like a prefix
	if err := os.MkdirAll(colon, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		roots []string
		want  []string // path=kind of every root kept
	}{
		{"no store: native", []string{native}, []string{native + "=native"}},
		{"a detected store nested in a native root is a root of its own", []string{native, nested},
			[]string{native + "=native", nested + "=records"}},
		{"a nested native root is found through the outer one", []string{native, "native:" + nested},
			[]string{native + "=native"}},
		{"a store given twice is read once", []string{nested, "records:" + nested}, []string{nested + "=records"}},
		{"a path that exists is never a prefix", []string{colon}, []string{colon + "=native"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			roots, _, err := PrepareRoots(tc.roots, recordStore{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range roots {
				got = append(got, r.Path+"="+string(r.Kind()))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("roots %v, want %v", got, tc.want)
			}
		})
	}
}
