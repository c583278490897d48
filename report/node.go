package report

import (
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// NodeValues is n as the document shows it at now, without its children
// (an empty list): a watch stream (serve's /api/v1/watch) sends the nodes
// that changed one by one, each naming its children.
func NodeValues(n *model.Node, now time.Time) NodeJSON {
	return nodeValues(n, now, nil)
}

// DocumentHead is the document of snap without its sessions (an empty
// list): the roots, thresholds, summary and problems.
func DocumentHead(snap *model.Snapshot) Document {
	return documentHead(snap)
}
