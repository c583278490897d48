package ui

import (
	"strings"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// beatAgePhrases introduce, in a reason the classifier wrote, an age measured
// from the node's beat mtime ("last beat 12s ago", "alive but not beating for
// 3m12s", ".running written 5s ago").
var beatAgePhrases = [...]string{"last beat ", "not beating for ", ".running written "}

// liveReason is n's reason with the beat age it quotes measured at now. The
// live engine re-classifies an idle fleet only when a state can change (and
// refreshes every reason now and then), so the ages in its reasons fall
// behind between snapshots; the row's beat column and this keep the screen
// current from BeatMtime, for the rows on screen only. Anything else in the
// reason is left as written.
func liveReason(n *model.Node, now time.Time) string {
	r := n.Reason
	if n.BeatMtime.IsZero() || r == "" {
		return r
	}
	// The last phrase is the classifier's own: text an agent wrote (a
	// blocked question) comes before it.
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
	n0, quoted := ageToken(r[start:])
	if n0 == 0 {
		return r
	}
	age := model.FormatAge(now.Sub(n.BeatMtime))
	if _, shown := ageToken(age); shown == quoted {
		return r // the quoted age still reads true ("6m" is "6m0s")
	}
	return r[:start] + age + r[start+n0:]
}

// ageToken reads the age model.FormatAge wrote at the start of s ("12s",
// "3m12s", "2h5m", "3d4h"): its length (0 when s does not start with one)
// and the duration it says.
func ageToken(s string) (int, time.Duration) {
	i, units := 0, 0
	var total time.Duration
	for units < 2 {
		j, v := i, 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' && v < 1<<40 {
			v = v*10 + int(s[j]-'0')
			j++
		}
		if j == i || j == len(s) {
			break
		}
		unit := ageUnit(s[j])
		if unit == 0 {
			break
		}
		total += time.Duration(v) * unit
		i, units = j+1, units+1
	}
	return i, total
}

func ageUnit(c byte) time.Duration {
	switch c {
	case 'd':
		return 24 * time.Hour
	case 'h':
		return time.Hour
	case 'm':
		return time.Minute
	case 's':
		return time.Second
	}
	return 0
}
