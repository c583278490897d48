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
	"maps"
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
	agents  map[string]agentRead
	order   []string // the paths of agents, sorted
	listErr error
	nodes   map[string]mapped
	buf     []agentFile // the agents of the last assembly, its memory reused
	facts   sources.Facts
}

// agentRead is one agent file as a read found it.
type agentRead struct {
	agent agentFile
	err   error
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
		next = &kept{store: store, nodes: map[string]mapped{}}
	}
	// The teams' configs are read again when a path under teams/ moved:
	// each names its hundred members, and a read of them all at every
	// agent's write was half of what following the store cost.
	teams := filepath.Join(store, teamsDir) + string(filepath.Separator)
	if whole || slices.ContainsFunc(changed, func(c string) bool { return strings.HasPrefix(c+string(filepath.Separator), teams) }) {
		next.teams.read, next.teams.err = readTeamConfigs(store)
	}
	if whole || slices.Contains(changed, dir) {
		next.agents, next.order, next.listErr = map[string]agentRead{}, next.order[:0], nil
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			next.listErr = err
		}
		for _, e := range entries {
			if isAgentFile(e.Name()) {
				next.read(filepath.Join(dir, e.Name()))
			}
		}
		maps.DeleteFunc(next.nodes, func(p string, _ mapped) bool { _, ok := next.agents[p]; return !ok })
	} else {
		for _, c := range changed {
			if filepath.Dir(c) == dir && isAgentFile(filepath.Base(c)) {
				next.read(c)
			}
		}
	}
	agents := next.buf[:0]
	var problems []model.Problem
	for _, p := range next.order {
		if r := next.agents[p]; r.err != nil {
			problems = append(problems, model.Problem{Path: p, Error: r.err.Error()})
		} else {
			agents = append(agents, r.agent)
		}
	}
	if next.listErr != nil {
		problems = append(problems, model.Problem{Path: dir, Error: next.listErr.Error()})
	}
	next.facts = s.assemble(store, next.teams, agents, problems, next.nodes)
	clear(agents)
	next.buf = agents
	return next.facts, next
}

// read reads the agent file at path into k, or forgets it when it is gone.
func (k *kept) read(path string) {
	a, ok, err := readAgent(path)
	i, found := slices.BinarySearch(k.order, path)
	if !ok {
		delete(k.agents, path)
		delete(k.nodes, path)
		if found {
			k.order = slices.Delete(k.order, i, i+1)
		}
		return
	}
	if !found {
		k.order = slices.Insert(k.order, i, path)
	}
	k.agents[path] = agentRead{agent: a, err: err}
}
