package ui

import "github.com/dispatchtop/dispatchtop/model"

// renew counts is in the place of was, either of them nil for none. A
// top-level node renewed over children it mostly shares with the one it
// renews (a fleet's host row, renewed when any of its nodes changed) costs
// the children it does not share, not its whole subtree twice: the counts
// are the same, a shared child being the same node (see model.Update).
func (c *tallyCache) renew(was, is *model.Node) {
	if was != nil && is != nil && len(was.Children) == len(is.Children) && len(is.Children) > 0 {
		// Matched by place, as sessions are: a renewed child takes its
		// old one's place.
		kept := 0
		for i, k := range is.Children {
			if was.Children[i] == k {
				kept++
			}
		}
		if 2*kept >= len(is.Children) {
			var gone, came model.Tally
			gone.Add(was)
			came.Add(is)
			for i, k := range is.Children {
				if was.Children[i] != k {
					gone.AddTree(was.Children[i])
					came.AddTree(k)
				}
			}
			c.whole.Sub(gone)
			c.whole.Merge(came)
			c.counted += gone.Nodes + came.Nodes
			return
		}
	}
	if was != nil {
		var t model.Tally
		t.AddTree(was)
		c.whole.Sub(t)
		c.counted += t.Nodes
	}
	if is != nil {
		var t model.Tally
		t.AddTree(is)
		c.whole.Merge(t)
		c.counted += t.Nodes
	}
}
