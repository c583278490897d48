package scanner

// The roots (SPEC §1, §10): what the command line names, made absolute and
// resolved, each given its source, nested and repeated ones dropped, and
// each given its id prefix.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/sources"
)

// PrepareRoots makes the given roots absolute and clean, resolves their
// symlinks, picks the source of each (a `KIND:PATH` prefix, else the first
// of srcs that detects its store, else the native file protocol), marks
// the stores the native reader walks too (sources.NativeTree), drops a
// native root given twice, or nested in (or the same as) a walked root
// (its nodes are found through that one), and a store given twice, and
// assigns id prefixes. A root that cannot be used is a problem; the error says so
// when no root is left, or names the known sources for an unknown KIND.
func PrepareRoots(paths []string, srcs ...sources.Source) ([]Root, []model.Problem, error) {
	reg := Options{Sources: srcs}.registry()
	var problems []model.Problem
	var roots []Root
	for _, arg := range paths {
		r, problem, err := resolveRoot(arg, reg)
		switch {
		case err != nil:
			return nil, problems, err
		case problem != nil:
			problems = append(problems, *problem)
		default:
			roots = append(roots, r)
		}
	}
	storeBeforeItsTree(roots)
	kept := outermostRoots(roots)
	addNativeTrees(kept, roots)
	if len(kept) > 1 {
		assignPrefixes(kept)
	}
	if len(kept) == 0 {
		msg := "no root given"
		if len(problems) > 0 {
			msg = problems[0].Path + ": " + problems[0].Error
		}
		return nil, problems, fmt.Errorf("no root could be read (%s)", msg)
	}
	return kept, problems, nil
}

// resolveRoot is the root arg names, its source picked from reg: its path
// absolute, its symlinks resolved. A path that cannot be used is a
// problem; an unknown KIND is an error.
func resolveRoot(arg string, reg []sources.Source) (Root, *model.Problem, error) {
	src, p, err := sourceOfRoot(arg, reg)
	if err != nil {
		return Root{}, nil, err
	}
	if src.Kind() != sources.Native {
		abs, resolved, err := storeRootPath(p)
		if err != nil {
			return Root{}, rootProblem(p, err), nil
		}
		return Root{Path: abs, Resolved: resolved, Source: src, AlsoNative: sources.HoldsNativeTree(src, abs)}, nil, nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Root{}, rootProblem(p, err), nil
	}
	resolved, err := resolvedDir(abs)
	if err != nil {
		return Root{}, rootProblem(abs, err), nil
	}
	return Root{Path: abs, Resolved: resolved}, nil, nil
}

// resolvedDir is abs with its symlinks resolved, which must be a directory.
func resolvedDir(abs string) (string, error) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(resolved)
	if err == nil && !fi.IsDir() {
		err = errNotDir
	}
	return resolved, err
}

func rootProblem(p string, err error) *model.Problem {
	return &model.Problem{Path: p, Error: termtext.OneLine("root: "+err.Error(), 0)}
}

// storeBeforeItsTree: a native root and a store that walks the same
// directory are one root, the store's, where the first of the two was
// given.
func storeBeforeItsTree(roots []Root) {
	for i := range roots {
		if !roots[i].isNative() {
			continue
		}
		for j := i + 1; j < len(roots); j++ {
			if roots[j].AlsoNative && roots[j].Resolved == roots[i].Resolved {
				roots[i], roots[j] = roots[j], roots[i]
				break
			}
		}
	}
}

// outermostRoots keeps the outermost of nested or repeated walked roots,
// in the order given; a store is kept once, and nested in nothing: a
// walked store inside another walked root keeps its store and leaves the
// walk of its directory to the outer root.
func outermostRoots(roots []Root) []Root {
	var kept []Root
	for i, r := range roots {
		if !r.coveredBy(roots, i) {
			kept = append(kept, r)
		}
	}
	return kept
}

// coveredBy says whether r, the i-th of roots, is given twice or walked
// through another walked root; a store walked through another keeps its
// store and is told not to walk its tree (AlsoNative false).
func (r *Root) coveredBy(roots []Root, i int) bool {
	covered := false
	for j, o := range roots {
		if i == j {
			continue
		}
		switch {
		case r.isNative() == o.isNative() && o.Resolved == r.Resolved && j < i:
			covered = true // given twice
		case r.isNative() && o.walked() && within(o.Resolved, r.Resolved) && (o.Resolved != r.Resolved || !o.isNative()):
			covered = true // walked through o
		case r.AlsoNative && o.walked() && o.Resolved != r.Resolved && within(o.Resolved, r.Resolved):
			r.AlsoNative = false
		}
	}
	return covered
}

// addNativeTrees gives each walked root of kept the trees a store of
// roots reads with the file protocol too, under the walked root that walks
// them: its own, or the outer root it is nested in. Their nodes are the
// store's system's own.
func addNativeTrees(kept, roots []Root) {
	for i := range kept {
		o := &kept[i]
		if !o.walked() {
			continue
		}
		for _, r := range roots {
			nt, ok := r.Source.(sources.NativeTree)
			if !ok || !r.AlsoNative || !within(o.Resolved, r.Resolved) {
				continue
			}
			if rel, err := filepath.Rel(o.Resolved, r.Resolved); err == nil {
				o.trees = append(o.trees, nativeTree{dir: filepath.Join(o.Path, rel), traits: nt.NativeTraits()})
			}
		}
	}
}

// assignPrefixes names each root's ids by its base name, counting up until
// the prefix is free: "x-2" made up for a second "x" may be the real name
// of another root.
func assignPrefixes(kept []Root) {
	taken := map[string]bool{}
	for i := range kept {
		base := filepath.Base(kept[i].Path)
		prefix := base
		for k := 2; taken[prefix]; k++ {
			prefix = fmt.Sprintf("%s-%d", base, k)
		}
		taken[prefix] = true
		kept[i].Prefix = prefix
	}
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == filepath.Separator
}
