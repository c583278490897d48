package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/internal/treegen"
	"github.com/dispatchtop/dispatchtop/liveness"
	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/scanner"
)

// benchSnapshot is the SPEC §8 tree: 1,000 sessions × 10 nodes, 3 deep,
// every node running (this process's pid).
func benchSnapshot(b *testing.B) *model.Snapshot {
	b.Helper()
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
	if n := len(snap.ByID); n != 10000 {
		b.Fatalf("%d nodes, want 10000", n)
	}
	return snap
}

func benchGet(b *testing.B, path, acceptEncoding string) {
	snap := benchSnapshot(b)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }})
	h := srv.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := localRequest(http.MethodGet, path)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
		size = rec.Body.Len()
		io.Copy(io.Discard, rec.Body)
	}
	b.ReportMetric(float64(size), "bytes/response")
}

// BenchmarkScrape10k is one /metrics scrape of 10,000 running nodes
// (10,000 heartbeat-age series, 4,000 state series).
func BenchmarkScrape10k(b *testing.B) { benchGet(b, MetricsPath, "") }

// BenchmarkSnapshotAPI10k is one /api/v1/snapshot of 10,000 nodes.
func BenchmarkSnapshotAPI10k(b *testing.B) { benchGet(b, SnapshotPath, "") }

// BenchmarkSnapshotAPIGzip10k is the same, compressed, as a fleet view
// (Go's HTTP client) asks for it.
func BenchmarkSnapshotAPIGzip10k(b *testing.B) { benchGet(b, SnapshotPath, "gzip") }
