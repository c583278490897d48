package report

import (
	"io"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// The document's writer at the size of SPEC §8's `--once --json` budget:
// 10,000 nodes as 3,334 sessions of a lead and two workers, and as one
// session of 10,000 nodes (a store's bus), each written whole.
func BenchmarkWriteJSON10k(b *testing.B) { benchWriteJSON(b, forestOf(3334)) }

func BenchmarkWriteJSONSession10k(b *testing.B) { benchWriteJSON(b, sessionOf(10000)) }

// BenchmarkWriteJSONLoneNodes10k is 10,000 sessions of one node each, as
// most of an agent's home reads (a Codex thread spawned by none, a Claude
// Code session without jobs): sessions too small to be worth handing from
// one core to another one by one.
func BenchmarkWriteJSONLoneNodes10k(b *testing.B) { benchWriteJSON(b, loneNodesOf(10000)) }

func benchWriteJSON(b *testing.B, snap *model.Snapshot) {
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteJSON(io.Discard, snap); err != nil {
			b.Fatal(err)
		}
	}
}
