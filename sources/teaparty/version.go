package teaparty

import (
	"github.com/dispatchtop/dispatchtop/sources"
)

// Version is the commit mark of a bus's -wal (see sources.Versioned): a
// commit is marked in the WAL index after its -wal was written and synced,
// with no event of its own, so the watcher looks at the mark to know
// whether a read saw the commit. Any other watch path has none. A bus
// whose connection is held is looked at through the files it holds open.
func (s *Source) Version(p string) sources.Version { return s.held.Version(p) }
