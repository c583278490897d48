package demo

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
	"github.com/dispatchtop/dispatchtop/sources"
)

// busSeen is what the scans showed of the bus job: per worker session id,
// the states it was in, and the pids its row named.
type busSeen struct {
	states map[string]map[model.State]bool
	pids   map[string]int
	// outside names workers seen anywhere but directly under the lead.
	outside map[string]bool
}

func (s *busSeen) add(f *Fleet, snap *model.Snapshot) {
	job := busJob()
	leadDir := filepath.Join(f.Dir(), filepath.FromSlash(job.lead))
	for _, n := range snap.Nodes() {
		if n.Source != string(sources.TeaParty) || n.Heartbeat == nil {
			continue
		}
		sid := n.Heartbeat.Optional().TaskID
		if n.Parent == nil || n.Parent.InfraDir != leadDir || n.Parent.Source == string(sources.TeaParty) {
			s.outside[sid] = true
			continue
		}
		if s.states[sid] == nil {
			s.states[sid] = map[model.State]bool{}
		}
		s.states[sid][n.State] = true
		s.pids[sid] = n.Heartbeat.PID
	}
}

// missing lists what each worker has not shown yet: the runners running,
// the completing one running and then finished (its row closed).
func (s *busSeen) missing() []string {
	var out []string
	for _, w := range busJob().workers {
		wants := []model.State{model.StateRunning}
		if w.behave == BehaveComplete {
			wants = append(wants, model.StateFinished)
		}
		for _, st := range wants {
			if !s.states[w.sid][st] {
				out = append(out, w.sid+" ("+w.role+"): "+string(st))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestDemoBusJobShowsItsWorkersUnderItsLead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := Start(ctx, t.TempDir(), binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	opts := scanner.Options{Roots: f.Roots(), Sources: Sources(), Thresholds: Thresholds()}
	s := &busSeen{states: map[string]map[model.State]bool{}, pids: map[string]int{}, outside: map[string]bool{}}
	began := time.Now()
	for time.Since(began) < 30*time.Second {
		snap, err := scanner.Scan(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range snap.Problems {
			t.Errorf("problem: %s: %s", p.Path, p.Error)
		}
		s.add(f, snap)
		if len(s.missing()) == 0 || t.Failed() {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if miss := s.missing(); len(miss) > 0 {
		t.Errorf("after %s the bus job has not shown:\n  %s", time.Since(began).Round(time.Second), strings.Join(miss, "\n  "))
	}
	for sid := range s.outside {
		t.Errorf("bus worker %s appeared outside its job lead", sid)
	}
	// Each row names a process the fleet started itself, not a made-up pid.
	fleetPids := f.Pids()
	for sid, pid := range s.pids {
		if !slices.Contains(fleetPids, pid) {
			t.Errorf("worker %s: pid %d is none of the fleet's processes %v", sid, pid, fleetPids)
		}
	}
}
