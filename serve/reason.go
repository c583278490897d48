package serve

import (
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// The live engine re-classifies an idle fleet only when a state can change
// (and refreshes every reason now and then), so a reason it wrote quotes a
// beat age that falls behind between snapshots: "beating; last beat 10s
// ago" half a minute later. --once computes its reasons at the moment it
// runs; the API answers like it by re-measuring the quoted age at the
// request. This is the rule the TUI applies to the rows on screen (ui's
// liveReason): the age after the classifier's last age phrase, measured
// from the beat mtime; anything else in the reason is left as written.

// beatAgePhrases introduce an age measured from the node's beat mtime.
var beatAgePhrases = [...]string{"last beat ", "not beating for ", ".running written "}

// freshReasons rewrites the beat ages quoted in the document's reasons as
// of now; byID gives each node's beat mtime.
func freshReasons(nodes []report.NodeJSON, byID map[string]*model.Node, now time.Time) {
	for i := range nodes {
		j := &nodes[i]
		if n := byID[j.ID]; n != nil && !n.BeatMtime.IsZero() {
			j.Reason = reasonAt(j.Reason, now.Sub(n.BeatMtime))
		}
		freshReasons(j.Children, byID, now)
	}
}

// reasonAt is r with the age after its last beat-age phrase replaced by age.
func reasonAt(r string, age time.Duration) string {
	at, phrase := -1, ""
	for _, p := range beatAgePhrases {
		if i := strings.LastIndex(r, p); i > at {
			at, phrase = i, p
		}
	}
	if at < 0 {
		return r
	}
	start := at + len(phrase)
	n := ageTokenLen(r[start:])
	if n == 0 {
		return r
	}
	return r[:start] + model.FormatAge(age) + r[start+n:]
}

// ageTokenLen is the length of the age model.FormatAge wrote at the
// start of s ("12s", "3m12s", "2h5m", "3d4h"), 0 when there is none.
func ageTokenLen(s string) int {
	i := 0
	for units := 0; units < 2; units++ {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i || j == len(s) {
			break
		}
		switch s[j] {
		case 'd', 'h', 'm', 's':
		default:
			return i
		}
		i = j + 1
	}
	return i
}
