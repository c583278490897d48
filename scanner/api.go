package scanner

// API agreed between packages while they are being built (owner: scanner).
// Bodies are filled in by scan.go, parse.go, tree.go; watch*.go adds Watcher.

import (
	"time"

	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
)

// Options configure a scan (and a watcher).
type Options struct {
	Roots      []string // as given; made absolute by Scan
	Ignore     []string // --ignore globs, matched against a directory's base name and its root-relative path
	MaxDepth   int      // 0 means the default, 32
	Thresholds model.Thresholds
	Probe      liveness.Probe // nil means liveness.SystemProbe
	Now        func() time.Time
}

// Scan reads every root once, builds the forest and classifies it.
// It fails (usage-level, exit 2) only when no root could be read.
//   func Scan(opts Options) (*model.Snapshot, error)
//
// ResolveNode finds a node in snap by id, infra dir or heartbeat path.
//   func ResolveNode(snap *model.Snapshot, arg string) (*model.Node, error)
//
// Parsers (pure, fuzzed):
//   func ParseHeartbeat(b []byte) (model.Heartbeat, error)
//   func ParseRegistry(b []byte) []model.RegistryLine
//   func ParseCfa(b []byte) (model.CfaState, error)
//   func ParseRetryCount(b []byte) (model.RetryCount, error)
//   func ParseBlocked(b []byte) (model.Blocked, error)
