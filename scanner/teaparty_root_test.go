package scanner

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/protocol"
	"github.com/dispatchtop/dispatchtop/sources"
	"github.com/dispatchtop/dispatchtop/sources/teaparty"
)

// teapartyProject is a project whose TeaParty home holds one job: its lead
// beats through the job's `.heartbeat` (the file protocol) with a native
// task below it, and its bus holds the job's row and one worker's.
type teapartyProject struct {
	dir, home, jobs, job, sessions string
	bus                            *sql.DB
}

const tpJob = "job-1--fix"

func newTeapartyProject(t *testing.T) teapartyProject {
	t.Helper()
	dir := t.TempDir()
	p := teapartyProject{dir: dir, home: filepath.Join(dir, ".teaparty"), sessions: filepath.Join(dir, ".sessions")}
	p.jobs = filepath.Join(p.home, "jobs")
	p.job = filepath.Join(p.jobs, tpJob)
	lead := node(t, p.job, "", "")
	node(t, p.job, "tasks/task-1--a", lead)
	writeFile(t, filepath.Join(p.job, protocol.CfaFile), `{"state": "EXECUTE"}`, time.Now(), 0)
	node(t, p.sessions, "s1", "")
	p.bus = storefixtures.NewDB(t, filepath.Join(p.job, "messages.db"), storefixtures.TeaPartyBusDDL)
	if _, err := p.bus.Exec(`INSERT INTO conversations (id, type, state, created_at, agent_name) VALUES ('job:webapp:1', 'job', 'active', ?, 'lead')`,
		float64(time.Now().UnixNano())/1e9); err != nil {
		t.Fatal(err)
	}
	p.addWorker(t, "aa")
	return p
}

// addWorker adds a worker's row under the job's.
func (p teapartyProject) addWorker(t *testing.T, sid string) {
	t.Helper()
	if _, err := p.bus.Exec(`INSERT INTO conversations (id, type, state, created_at, parent_conversation_id) VALUES (?, 'dispatch', 'active', ?, 'job:webapp:1')`,
		"dispatch:"+sid, float64(time.Now().UnixNano())/1e9); err != nil {
		t.Fatal(err)
	}
}

// SPEC §10: a TeaParty root is read by the file protocol and by TeaParty's
// source as one root: the job's lead, its native task and its bus worker
// below it, under one prefix (none for a lone root) and one entry in the
// roots, whose source is "teaparty". Given as a bare path, as `teaparty:`,
// or as `native:` and `teaparty:` of the same path, it is the same root;
// `native:` alone reads the files alone.
func TestTeaPartyRootIsReadByBothTheFileProtocolAndItsSource(t *testing.T) {
	p := newTeapartyProject(t)
	both := []string{tpJob, tpJob + "/tasks/task-1--a", tpJob + "/dispatch:aa"}
	prefixed := func(prefix string, ids ...string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = prefix + "/" + id
		}
		return out
	}
	tests := []struct {
		name    string
		roots   []string
		want    []string // the ids of the job's nodes
		absent  []string
		sources []string // root_sources, in order
	}{
		{"a bare jobs dir", []string{p.jobs}, both, nil, []string{"teaparty"}},
		{"teaparty:jobs", []string{"teaparty:" + p.jobs}, both, nil, []string{"teaparty"}},
		{"native:jobs and teaparty:jobs are one root", []string{"native:" + p.jobs, "teaparty:" + p.jobs}, both, nil, []string{"teaparty"}},
		{"teaparty:jobs and native:jobs are one root", []string{"teaparty:" + p.jobs, "native:" + p.jobs}, both, nil, []string{"teaparty"}},
		{"native:jobs reads the files alone", []string{"native:" + p.jobs}, both[:2], both[2:], []string{"native"}},
		{"beside another root: one prefix", []string{p.jobs, p.sessions},
			append(prefixed("jobs", both...), ".sessions/s1"), nil, []string{"teaparty", "native"}},
		{"the home, with native:jobs nested in it", []string{"native:" + p.jobs, p.home},
			prefixed("jobs", both...), nil, []string{"teaparty"}},
		{"inside a native root: its files are the outer root's, its bus its own", []string{"native:" + p.dir, p.jobs},
			append(prefixed(filepath.Base(p.dir), ".teaparty/jobs/"+tpJob, ".teaparty/jobs/"+tpJob+"/tasks/task-1--a", ".sessions/s1"), "jobs/"+tpJob+"/dispatch:aa"),
			nil, []string{"native", "teaparty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := Scan(Options{Roots: tc.roots, Sources: []sources.Source{teaparty.New()}})
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Problems) > 0 {
				t.Errorf("problems %v", snap.Problems)
			}
			if !slices.Equal(snap.RootSources, tc.sources) {
				t.Errorf("roots %v read by %v, want %v", snap.Roots, snap.RootSources, tc.sources)
			}
			got := ids(snap)
			if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
			for _, id := range tc.absent {
				if snap.Node(id) != nil {
					t.Errorf("%s read, want the files alone", id)
				}
			}
			lead := tc.want[0]
			if n := mustNode(t, snap, lead); n.Source != "" || n.Cfa == nil || n.State != model.StateRunning {
				t.Errorf("lead %s: source %q, cfa %v, %s (%s); want the native lead, running", lead, n.Source, n.Cfa, n.State, n.Reason)
			}
			for _, id := range tc.want[1:] {
				if n := snap.Node(id); !strings.HasSuffix(id, "/s1") && n.ParentID != lead {
					t.Errorf("%s under %q, want under the lead %s", id, n.ParentID, lead)
				}
			}
		})
	}
}

// SPEC §10: the live engine reads a TeaParty root both ways too: a beat of
// the lead's heartbeat, a new task's heartbeat and a new bus row each show.
func TestWatchTeaPartyRootFollowsItsFilesAndItsBus(t *testing.T) {
	p := newTeapartyProject(t)
	w, err := NewWatcher(Options{Roots: []string{p.jobs}, Sources: []sources.Source{teaparty.New()}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	if got, want := ids(w.Snapshot()), []string{tpJob, tpJob + "/dispatch:aa", tpJob + "/tasks/task-1--a"}; !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}

	node(t, p.job, "tasks/task-2--b", filepath.Join(p.job, protocol.HeartbeatFile))
	await(t, w, "the new native task", func(s *model.Snapshot) bool {
		n := s.Node(tpJob + "/tasks/task-2--b")
		return n != nil && n.ParentID == tpJob
	})

	p.addWorker(t, "bb")
	await(t, w, "the new bus worker under the lead", func(s *model.Snapshot) bool {
		n := s.Node(tpJob + "/dispatch:bb")
		return n != nil && n.ParentID == tpJob
	})
	if got := w.Snapshot().RootSources; !slices.Equal(got, []string{"teaparty"}) {
		t.Errorf("root sources %v, want one teaparty root", got)
	}
}

// SPEC §10: the live engine gives a TeaParty job's lead, read through its
// `.heartbeat`, the source's traits on its first read and on every read
// after: completed over CfA DONE, it is merged by TeaParty itself, never
// offered `merge`; its native task below it is TeaParty's too. A native
// root's lead beside it keeps a heartbeat's traits.
func TestWatchTeaPartyJobLeadKeepsItsSourcesTraits(t *testing.T) {
	p := newTeapartyProject(t)
	w, err := NewWatcher(Options{Roots: []string{p.jobs, p.sessions}, Sources: []sources.Source{teaparty.New()}},
		WatchOptions{FallbackPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runWatcher(t, w)
	lead, task := "jobs/"+tpJob, "jobs/"+tpJob+"/tasks/task-1--a"
	want := teaparty.New().NativeTraits()
	snap := w.Snapshot()
	for _, id := range []string{lead, task} {
		if n := mustNode(t, snap, id); n.Traits != want || n.Source != "" {
			t.Errorf("%s: source %q, traits %+v, want the native reader's node with TeaParty's %+v", id, n.Source, n.Traits, want)
		}
	}
	if n := mustNode(t, snap, ".sessions/s1"); n.Traits != (model.Traits{}) {
		t.Errorf("a native root's node: traits %+v, want none", n.Traits)
	}

	hb := filepath.Join(p.job, protocol.HeartbeatFile)
	writeFile(t, filepath.Join(p.job, protocol.CfaFile), `{"state": "DONE"}`, time.Now(), 0)
	writeFile(t, hb, heartbeat(os.Getpid(), "", "completed"), time.Now(), 0)
	await(t, w, "the completed lead, merged by TeaParty", func(s *model.Snapshot) bool {
		n := s.Node(lead)
		return n != nil && n.State == model.StateFinished && n.Cfa != nil && n.Cfa.State == "DONE"
	})
	n := mustNode(t, w.Snapshot(), lead)
	if n.Traits != want || n.Action != model.ActionNone || !strings.Contains(n.Reason, "its source merges by itself") {
		t.Errorf("re-read lead: traits %+v, %s (%s); want TeaParty's traits, none: its source merges by itself", n.Traits, n.Action, n.Reason)
	}
}
