package remote

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// BenchmarkDecode10k is what one poll of a 10,000-node host costs the
// viewer: decode the v1 document and rebuild the snapshot.
func BenchmarkDecode10k(b *testing.B) {
	root := filepath.Join(b.TempDir(), ".sessions")
	now := time.Now()
	if err := treegen.Generate(root, 1000, 10, 3, now); err != nil {
		b.Fatal(err)
	}
	snap, err := scanner.Scan(scanner.Options{Roots: []string{root}, Probe: liveness.SystemProbe{},
		Thresholds: model.DefaultThresholds(), Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	var doc bytes.Buffer
	if err := report.WriteJSON(&doc, snap); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(doc.Len()))
	for b.Loop() {
		d, err := Decode(bytes.NewReader(doc.Bytes()))
		if err != nil {
			b.Fatal(err)
		}
		if got := ToSnapshot(d, now, "host", nil); len(got.ByID) != 10000 {
			b.Fatalf("%d nodes", len(got.ByID))
		}
	}
}
