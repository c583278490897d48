package opencodeteams

// Reading again after a change (sources.Rereader): the store is one JSON
// file per agent, each written whole by the plugin (writeAtomicJSON, a
// temp file renamed over), so a change reads again the agent files that
// moved and keeps every other one as the last read parsed it. The teams'
// configs (one per team) are read again when one of them moved; the
// agents' panes and servers at every read: a pane's end is in no file the
// store is watched by.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

var (
	_ sources.Rereader   = Source{}
	_ sources.DirWatched = Source{}
)

// kept is what a read keeps for the next: every agent file read (or why
// it could not be), their paths in order, the agents dir's listing error,
// what the last assembly made and the facts. A read builds on the last
// one's kept in place: the scanner hands it back at every read and keeps
// no other, and a read that panics loses it (the next one reads the store
// whole).
type kept struct {
	store   string
	teams   teamConfigs
	agents  map[string]*agentRead
	order   []*agentRead // the agents, by path
	listErr error
	files   []*agentFile // the agents of the last assembly and their nodes,
	nodes   []*mapped    // their memory reused
	last    assembled
	beats   *beatState
	facts   sources.Facts
}

// agentRead is one agent file as a read found it, and the node it was
// last made into.
type agentRead struct {
	agent agentFile
	err   error
	node  mapped
	// sig is the file's as it was read (lstat, before the read): a file
	// read again with the same inode, size and mtime is as it was.
	sig os.FileInfo
}

// unmoved reports whether the agent file e is the one r was read from,
// as it was: a rewrite by rename is another inode.
func (r *agentRead) unmoved(e fs.DirEntry) bool {
	fi, err := e.Info()
	return err == nil && r.sig != nil && fi.Mode().IsRegular() && os.SameFile(fi, r.sig) &&
		fi.Size() == r.sig.Size() && fi.ModTime().Equal(r.sig.ModTime())
}

// moved is an agent file a read was told moved, as the last read had it
// (nil: it had none it could read).
type moved struct {
	path string
	was  *agentFile
}

// Reread reads the store again: told which agent files moved, it reads
// those alone; told that the agents dir itself moved (the poll, a refresh)
// or nothing (lost events), every file. A node whose agent file, parent
// and process are as they were is the last read's own; so is a team's
// leader whose config was not read again.
//
// A write of agent files that leaves every node where it was (the same
// agents, teams and leaders, no problem come or gone, OpenCode's database
// as it was) costs those files alone: their nodes are put in place of the
// old ones in the facts' list, which is the kept's own (the scanner copies
// what it keeps of it), the facts' Changed says where, and nothing else of
// the store is looked at. Any other change assembles the facts anew from
// what is kept (Changed nil).
func (s Source) Reread(path string, now time.Time, k sources.Kept, changed []string) (sources.Facts, sources.Kept) {
	store, _ := storeDir(path)
	last, _ := k.(*kept)
	if last != nil && last.store != store {
		last = nil
	}
	if last != nil && changed != nil && len(changed) == 0 {
		f := last.facts
		f.Changed = []int{}
		return f, last
	}
	dir := filepath.Join(store, agentsDir)
	whole := last == nil || changed == nil || slices.Contains(changed, store)
	next := last
	if next == nil {
		next = &kept{store: store, beats: &beatState{hold: true}}
	}
	// The teams' configs are read again when a path under teams/ moved:
	// each names its hundred members, and a read of them all at every
	// agent's write was half of what following the store cost.
	teams := filepath.Join(store, teamsDir) + string(filepath.Separator)
	leaders := next.last.leaders
	if whole || slices.ContainsFunc(changed, func(c string) bool { return strings.HasPrefix(c+string(filepath.Separator), teams) }) {
		next.teams.read, next.teams.err = readTeamConfigs(store)
		leaders = nil
	}
	var moves []moved
	patch := !whole && leaders != nil
	if whole || slices.Contains(changed, dir) {
		patch = false
		// Told that the dirs moved (a refresh, the poll), a file whose
		// signature did not is as the last read parsed it; told nothing
		// (lost events, a first read), every file is read.
		signed := last != nil && changed != nil
		was := next.agents
		next.agents, next.order, next.listErr = map[string]*agentRead{}, nil, nil
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			next.listErr = err
		}
		for _, e := range entries {
			if !isAgentFile(e.Name()) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			o := was[p]
			if signed && o != nil && o.unmoved(e) {
				next.order = append(next.order, o) // ReadDir's order: by name, so by path
				next.agents[p] = o
				continue
			}
			next.read(p)
			if r := next.agents[p]; r != nil && o != nil {
				r.node = o.node
			}
		}
	} else {
		for _, c := range changed {
			switch {
			case filepath.Dir(c) == dir && isAgentFile(filepath.Base(c)):
				m := moved{path: c}
				if r := next.agents[c]; r != nil && r.err == nil {
					was := r.agent
					m.was = &was
				}
				next.read(c)
				moves = append(moves, m)
			case filepath.Dir(c) == dir:
				// Another file of the agents dir (an atomic write's temp
				// file): the system reads none.
			default:
				patch = false // a team's config, a server's file
			}
		}
	}
	if patch && s.patch(next, moves) {
		return next.facts, next
	}
	files, nodes := next.files[:0], next.nodes[:0]
	var problems []model.Problem
	for _, r := range next.order {
		if r.err != nil {
			problems = append(problems, model.Problem{Path: r.agent.path, Error: r.err.Error()})
		} else {
			files, nodes = append(files, &r.agent), append(nodes, &r.node)
		}
	}
	if next.listErr != nil {
		problems = append(problems, model.Problem{Path: dir, Error: next.listErr.Error()})
	}
	next.facts, next.last = s.assemble(store, next.teams, files, problems, nodes, next.beats, leaders)
	next.files, next.nodes = files, nodes
	return next.facts, next
}

// patch puts the nodes of the agent files that moved in place of their
// last ones in k.facts, and reports whether it could: each file read as
// before (the same node id, so the same team and place in the list), its
// team's leader not its agent, its project's server file one the last
// assembly read, no problem come, and OpenCode's database not moved since
// its last read. Otherwise the facts must be assembled anew (k is left as
// it can be assembled from: the files read, their nodes as they were).
func (s Source) patch(k *kept, moves []moved) bool {
	type placed struct {
		r    *agentRead
		at   int
		proc agentProcess
	}
	j := k.last.judge.again()
	var sink sources.Facts
	put := make([]placed, 0, len(moves))
	at := make([]int, 0, len(moves))
	for _, m := range moves {
		r := k.agents[m.path]
		if r == nil || r.err != nil || m.was == nil {
			return false // come, gone, broken or mended: the list or the problems move
		}
		a := &r.agent
		leader := k.last.leaderOf[a.state.TeamName]
		if a.id != m.was.id || !a.teamOK || a.state.Cwd != m.was.state.Cwd ||
			leader != "" && (a.state.ID == leader || m.was.state.ID == leader) {
			return false
		}
		at, found := slices.BinarySearchFunc(k.facts.Nodes, a.id, func(n *model.Node, id string) int { return strings.Compare(n.ID, id) })
		if !found || k.facts.Nodes[at].HeartbeatPath != a.path {
			return false
		}
		var proc agentProcess
		if j != nil {
			proc, _ = j.agent(a, &sink)
			if len(sink.Problems) > 0 {
				return false // a server file the last assembly did not read
			}
		}
		put = append(put, placed{r: r, at: at, proc: proc})
	}
	db, beats := s.beatsDB()
	if beats && !k.beats.unmoved(db) || !beats && len(k.beats.copies) > 0 {
		return false // every session's beat may have moved, or gone
	}
	for _, p := range put {
		was := p.r.node.made
		parent := filepath.Join(k.store, teamsDir, p.r.agent.state.TeamName, teamConfigFile)
		n := p.r.node.node(&p.r.agent, parent, p.proc)
		if beats {
			if was != n {
				delete(k.beats.copies, was)
			}
			if id := p.r.agent.state.SessionID; id != "" {
				if err := k.beats.ask(db, []string{id}); err != nil {
					return false
				}
				if t := k.beats.times[id]; !t.IsZero() {
					n = k.beats.give(n, t, k.beats.copies)
				} else {
					delete(k.beats.copies, n)
				}
			} else {
				delete(k.beats.copies, n)
			}
		}
		k.facts.Nodes[p.at] = n
		at = append(at, p.at)
	}
	k.facts.Changed = at
	return true
}

// read reads the agent file at path into k, or forgets it when it is gone;
// the node its last reading was made into stays with it, for assemble to
// keep when the file says what it said.
func (k *kept) read(path string) {
	sig, _ := os.Lstat(path)
	a, ok, err := readAgent(path)
	i, found := slices.BinarySearchFunc(k.order, path, func(r *agentRead, p string) int { return strings.Compare(r.agent.path, p) })
	switch {
	case !ok:
		delete(k.agents, path)
		if found {
			k.order = slices.Delete(k.order, i, i+1)
		}
	case found:
		k.order[i].agent, k.order[i].err, k.order[i].sig = a, err, sig
	default:
		r := &agentRead{agent: a, err: err, sig: sig}
		k.order = slices.Insert(k.order, i, r)
		k.agents[path] = r
	}
}
