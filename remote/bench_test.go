package remote

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
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

// BenchmarkFleetPollHostile is what one poll costs the viewer against a
// host that sends too much (SPEC §8): 1 GB bodies of one string, of small
// values, of sessions of strings just under the string cap, a gzip bomb of
// 1 GiB, a million minimal nodes, each refused at its cap; and, read, the most
// minimal nodes the node cap lets through and the 10,000 nodes of the
// benchmark tree. peak-MiB is the heap's growth during the poll (sampled
// every 200 µs); held-B/node, what the fleet keeps of a node read (its
// document and its node in the merged forest) once the poll is done.
func BenchmarkFleetPollHostile(b *testing.B) {
	member := func() []byte {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(bytes.Repeat([]byte(" "), 8<<20))
		w.Close()
		return z.Bytes()
	}()
	realDoc := func() []byte {
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
		return doc.Bytes()
	}
	serveBody := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { w.Write(body) }
	}
	// The budgets of SPEC §8: the heap's growth during the poll, and what
	// a node read is held at.
	const bytesRefused, nodesRefused, heldANode = 128 + 16, 160, 2048
	tests := []struct {
		name    string
		handler func() http.HandlerFunc
		nodes   int     // read; 0: refused
		peak    float64 // MiB at most; 0: no budget of its own
	}{
		{"1GB-body", func() http.HandlerFunc {
			chunk := bytes.Repeat([]byte("a"), 1<<20)
			return func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"schema": "dispatchtop/v1", "roots": ["`)
				for range 1024 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}
		}, 0, 32},
		{"1GB-of-values", func() http.HandlerFunc {
			chunk := bytes.Repeat([]byte("0,"), 1<<19)
			return func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"schema": "dispatchtop/v1", "roots": [`)
				for range 1024 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}
		}, 0, 32},
		{"1GB-of-8MiB-sessions", func() http.HandlerFunc {
			// Sessions of one string each just under the string cap: the
			// byte cap is what stops them.
			session := []byte(`{"id": "s", "reason": "` + strings.Repeat("a", maxString-64) + `"},`)
			return func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"schema": "dispatchtop/v1", "sessions": [`)
				for range 128 {
					if _, err := w.Write(session); err != nil {
						return
					}
				}
			}
		}, 0, bytesRefused},
		{"gzip-bomb-1GiB", func() http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				for range 128 {
					if _, err := w.Write(member); err != nil {
						return
					}
				}
			}
		}, 0, 1},
		{"1M-minimal-nodes", func() http.HandlerFunc { return serveBody(minimalDoc(100_000, 9, 0)) }, 0, nodesRefused},
		{"node-cap-minimal-nodes", func() http.HandlerFunc { return serveBody(minimalDoc(DefaultMaxNodes/10, 9, 0)) }, DefaultMaxNodes, 0},
		{"10k-nodes", func() http.HandlerFunc { return serveBody(realDoc()) }, 10_000, 0},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			srv := httptest.NewServer(tt.handler())
			defer srv.Close()
			var peak, held float64
			b.ReportAllocs()
			for b.Loop() {
				f := NewFleet(Options{Hosts: []Host{{Name: "h", URL: srv.URL}}, Timeout: time.Minute})
				runtime.GC()
				base := heapObjects()
				stop := make(chan struct{})
				top := make(chan uint64)
				go func() {
					var high uint64
					t := time.NewTicker(200 * time.Microsecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							top <- max(high, heapObjects())
							return
						case <-t.C:
							high = max(high, heapObjects())
						}
					}
				}()
				u := f.Poll(context.Background())
				close(stop)
				high := <-top
				if got := u.Hosts[0].Nodes; tt.nodes == 0 && (u.Hosts[0].Reachable || !strings.Contains(u.Hosts[0].Err, "cap")) ||
					tt.nodes > 0 && (!u.Hosts[0].Reachable || u.Snapshot.NodeCount()-1 != tt.nodes) {
					b.Fatalf("host %+v (%d nodes), want %d nodes", u.Hosts[0], got, tt.nodes)
				}
				peak = max(peak, float64(high-min(high, base))/(1<<20))
				if tt.nodes > 0 {
					runtime.GC()
					held = float64(heapObjects()-min(heapObjects(), base)) / float64(tt.nodes)
				}
				runtime.KeepAlive(f)
				runtime.KeepAlive(u)
			}
			b.ReportMetric(peak, "peak-MiB")
			if tt.nodes > 0 {
				b.ReportMetric(held, "held-B/node")
			}
			if tt.peak > 0 && peak > tt.peak {
				b.Errorf("the heap grew by %.1f MiB during the poll: over the budget of %.0f MiB", peak, tt.peak)
			}
			if tt.nodes > 0 && held > heldANode {
				b.Errorf("%.0f bytes held a node read: over the budget of %d", held, heldANode)
			}
		})
	}
}

// heapObjects is the bytes of the heap's live and unswept objects.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
