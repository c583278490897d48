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

var _ sources.Rereader = Source{}

// kept is what a read keeps for the next: every agent file read (or why
// it could not be), their paths in order, the agents dir's listing error,
// the nodes made and the facts. A read builds on the last one's kept in
// place: the scanner hands it back at every read and keeps no other, and a
// read that panics loses it (the next one reads the store whole).
type kept struct {
	store   string
	teams   teamConfigs
	agents  map[string]*agentRead
	order   []*agentRead // the agents, by path
	listErr error
	files   []*agentFile // the agents of the last assembly and their nodes,
	nodes   []*mapped    // their memory reused
	beats   map[*model.Node]beaten
	facts   sources.Facts
}

// agentRead is one agent file as a read found it, and the node it was
// last made into.
type agentRead struct {
	agent agentFile
	err   error
	node  mapped
}

// Reread reads the store again: told which agent files moved, it reads
// those alone; told that the agents dir itself moved (the poll, a refresh)
// or nothing (lost events), every file. A node whose agent file, parent
// and process are as they were is the last read's own. What a write of
// one file costs does not grow with the store beyond one pass over its
// agents: no map of them is copied or made again, their order is kept,
// and a team name is checked when its file is read, not at every read.
func (s Source) Reread(path string, now time.Time, k sources.Kept, changed []string) (sources.Facts, sources.Kept) {
	store, _ := storeDir(path)
	last, _ := k.(*kept)
	if last != nil && last.store != store {
		last = nil
	}
	if last != nil && changed != nil && len(changed) == 0 {
		return last.facts, last
	}
	dir := filepath.Join(store, agentsDir)
	whole := last == nil || changed == nil || slices.Contains(changed, store)
	next := last
	if next == nil {
		next = &kept{store: store}
	}
	// The teams' configs are read again when a path under teams/ moved:
	// each names its hundred members, and a read of them all at every
	// agent's write was half of what following the store cost.
	teams := filepath.Join(store, teamsDir) + string(filepath.Separator)
	if whole || slices.ContainsFunc(changed, func(c string) bool { return strings.HasPrefix(c+string(filepath.Separator), teams) }) {
		next.teams.read, next.teams.err = readTeamConfigs(store)
	}
	if whole || slices.Contains(changed, dir) {
		was := next.agents
		next.agents, next.order, next.listErr = map[string]*agentRead{}, nil, nil
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			next.listErr = err
		}
		for _, e := range entries {
			if isAgentFile(e.Name()) {
				p := filepath.Join(dir, e.Name())
				next.read(p)
				if r, o := next.agents[p], was[p]; r != nil && o != nil {
					r.node = o.node
				}
			}
		}
	} else {
		for _, c := range changed {
			if filepath.Dir(c) == dir && isAgentFile(filepath.Base(c)) {
				next.read(c)
			}
		}
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
	next.facts, next.beats = s.assemble(store, next.teams, files, problems, nodes, next.beats)
	next.files, next.nodes = files, nodes
	return next.facts, next
}

// read reads the agent file at path into k, or forgets it when it is gone;
// the node its last reading was made into stays with it, for assemble to
// keep when the file says what it said.
func (k *kept) read(path string) {
	a, ok, err := readAgent(path)
	i, found := slices.BinarySearchFunc(k.order, path, func(r *agentRead, p string) int { return strings.Compare(r.agent.path, p) })
	switch {
	case !ok:
		delete(k.agents, path)
		if found {
			k.order = slices.Delete(k.order, i, i+1)
		}
	case found:
		k.order[i].agent, k.order[i].err = a, err
	default:
		r := &agentRead{agent: a, err: err}
		k.order = slices.Insert(k.order, i, r)
		k.agents[path] = r
	}
}
