package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
)

// The snapshot is rendered whole before the status is sent: a node whose
// started is not a number (a store's +Inf) is a 200 with started null, and
// a document that cannot be encoded is a 500 with a one-line body, never a
// 200 with an empty or cut body, gzipped or not.
func TestSnapshotAPISendsOnlyAStatusItCanHonour(t *testing.T) {
	infinite := func() *model.Snapshot {
		snap := fixtureSnapshot(t)
		snap.ByID["A"].Heartbeat.Started = math.Inf(1)
		return snap
	}
	unencodable := func() *model.Snapshot {
		snap := fixtureSnapshot(t)
		snap.ByID["B"].Heartbeat.SetOptional(model.HeartbeatOptional{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{not json`)}})
		return snap
	}
	tests := []struct {
		name    string
		snap    *model.Snapshot
		gzip    bool
		code    int
		started any // the lead's, for a 200
	}{
		{"+Inf started: null", infinite(), false, http.StatusOK, nil},
		{"+Inf started, gzipped: null", infinite(), true, http.StatusOK, nil},
		{"unencodable: 500", unencodable(), false, http.StatusInternalServerError, nil},
		{"unencodable, gzip asked: 500, not gzipped", unencodable(), true, http.StatusInternalServerError, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log strings.Builder
			srv := New(Options{Snapshot: func() *model.Snapshot { return tt.snap }, Now: func() time.Time { return fixedNow }, ErrorLog: &log})
			req := localRequest(http.MethodGet, SnapshotPath)
			if tt.gzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d; body %q", rec.Code, tt.code, rec.Body)
			}
			body := rec.Body.Bytes()
			if rec.Code != http.StatusOK {
				if rec.Header().Get("Content-Encoding") != "" {
					t.Errorf("an error is sent with Content-Encoding %q", rec.Header().Get("Content-Encoding"))
				}
				line := strings.TrimSuffix(string(body), "\n")
				if line == "" || strings.Contains(line, "\n") || !strings.Contains(line, "encode the snapshot") {
					t.Errorf("body %q: want one line saying the snapshot could not be encoded", body)
				}
				if !strings.Contains(log.String(), "encode the snapshot") {
					t.Errorf("the error log says %q", log.String())
				}
				return
			}
			if tt.gzip {
				if rec.Header().Get("Content-Encoding") != "gzip" {
					t.Fatalf("Content-Encoding %q", rec.Header().Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			var doc struct {
				Sessions []map[string]any `json:"sessions"`
			}
			if err := json.Unmarshal(body, &doc); err != nil || len(doc.Sessions) == 0 {
				t.Fatalf("body is no document (%v): %q", err, body)
			}
			if got, ok := doc.Sessions[0]["started"]; !ok || got != tt.started {
				t.Errorf("the lead's started = %v (present %v), want %v", got, ok, tt.started)
			}
		})
	}
}
