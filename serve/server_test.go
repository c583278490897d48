package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/model"
	"github.com/dispatchtop/dispatchtop/report"
)

// /api/v1/snapshot is the dispatchtop/v1 document of the newest snapshot,
// byte for byte what --once --json writes for it, ages measured at the
// request.
func TestSnapshotAPIIsTheV1Document(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, localRequest(http.MethodGet, SnapshotPath))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", SnapshotPath, rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var want bytes.Buffer
	if err := report.WriteJSON(&want, snap); err != nil {
		t.Fatal(err)
	}
	if rec.Body.String() != want.String() {
		t.Errorf("API body differs from --once --json:\n%s\nwant:\n%s", rec.Body, want.String())
	}

	// Later, the same snapshot is served with ages as of the request.
	later := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow.Add(time.Minute) }})
	rec = httptest.NewRecorder()
	later.Handler().ServeHTTP(rec, localRequest(http.MethodGet, SnapshotPath))
	if !strings.Contains(rec.Body.String(), `"beat_age_s": 70`) {
		t.Errorf("the lead's beat age is not measured at the request (want 70 s):\n%s", rec.Body)
	}
	// So is the age a reason quotes, as --once would write it then.
	if !strings.Contains(rec.Body.String(), `"reason": "beating; last beat 1m10s ago"`) {
		t.Errorf("the lead's reason does not quote its age at the request (1m10s):\n%s", rec.Body)
	}
	if !snap.GeneratedAt.Equal(fixedNow) {
		t.Errorf("serving mutated the shared snapshot: generated_at %v", snap.GeneratedAt)
	}
}

// Bearer token: 401 without or with a wrong one, 200 with it, on every path.
func TestBearerToken(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Token: "s3cret"})
	tests := []struct {
		name   string
		path   string
		header string
		want   int
	}{
		{"api without a token", SnapshotPath, "", http.StatusUnauthorized},
		{"api with a wrong token", SnapshotPath, "Bearer s3cre", http.StatusUnauthorized},
		{"api with the token as basic auth", SnapshotPath, "Basic s3cret", http.StatusUnauthorized},
		{"api with the token", SnapshotPath, "Bearer s3cret", http.StatusOK},
		{"metrics without a token", MetricsPath, "", http.StatusUnauthorized},
		{"metrics with the token", MetricsPath, "Bearer s3cret", http.StatusOK},
		{"index with the token", "/", "Bearer s3cret", http.StatusOK},
		{"unknown path with the token", "/nope", "Bearer s3cret", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := localRequest(http.MethodGet, tt.path)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
			if tt.want == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge")
			}
		})
	}
}

// Read-only: nothing but GET (and HEAD) is answered.
func TestReadOnlyMethods(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }})
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, localRequest(method, SnapshotPath))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", method, SnapshotPath, rec.Code)
		}
	}
}

// Binds to loopback unless a non-loopback host is named.
func TestListenAddress(t *testing.T) {
	tests := []struct {
		in       string
		want     string
		loopback bool
		wantErr  bool
	}{
		{"", "127.0.0.1:9477", true, false},
		{":9477", "127.0.0.1:9477", true, false},
		{"localhost:80", "localhost:80", true, false},
		{"[::1]:9477", "[::1]:9477", true, false},
		{"0.0.0.0:9477", "0.0.0.0:9477", false, false},
		{"10.1.2.3:9477", "10.1.2.3:9477", false, false},
		{"9477", "", false, true},
		{"127.0.0.1:", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, loop, err := ListenAddress(tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--listen") {
					t.Fatalf("err = %v, want a --listen error", err)
				}
				return
			}
			if err != nil || got != tt.want || loop != tt.loopback {
				t.Errorf("ListenAddress(%q) = %q, %v, %v; want %q, %v", tt.in, got, loop, err, tt.want, tt.loopback)
			}
		})
	}
}

// The token comes from --token-file, else DISPATCHTOP_TOKEN. A source that
// is given but holds no token (a missing file, a blank first line, the
// variable set to "" or blanks) is an error naming that source, never "no
// token": a typo or an empty secret must not turn authentication off.
func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("token", "abc123\n")
	unset := func(string) (string, bool) { return "", false }
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == TokenEnv {
				return v, true
			}
			return "", false
		}
	}
	tests := []struct {
		name, file string
		env        func(string) (string, bool)
		want       string
		wantErr    string // what the error names; "" for none
	}{
		{name: "none", env: unset, want: ""},
		{name: "environment", env: env("fromenv"), want: "fromenv"},
		{name: "environment trimmed", env: env(" fromenv\n"), want: "fromenv"},
		{name: "file beats environment", file: good, env: env("fromenv"), want: "abc123"},
		{name: "file beats a blank environment", file: good, env: env(" "), want: "abc123"},
		{name: "environment empty", env: env(""), wantErr: "$" + TokenEnv},
		{name: "environment spaces", env: env("  "), wantErr: "$" + TokenEnv},
		{name: "environment tab", env: env("\t"), wantErr: "$" + TokenEnv},
		{name: "file empty", file: file("empty", ""), env: env("fromenv"), wantErr: "empty"},
		{name: "file newline", file: file("newline", "\n"), env: unset, wantErr: "newline"},
		{name: "file spaces", file: file("spaces", "  \n"), env: unset, wantErr: "spaces"},
		{name: "file tab", file: file("tab", "\t\nsecond-line\n"), env: unset, wantErr: "tab"},
		{name: "file missing", file: filepath.Join(dir, "nope"), env: env("fromenv"), wantErr: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadToken(tt.file, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ReadToken = %q, %v; want one line naming %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadToken = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// Serve answers on a real listener and returns cleanly when its context is
// cancelled (SIGINT/SIGTERM cancel it in the command).
func TestServeShutsDownOnCancel(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + SnapshotPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"schema": "dispatchtop/v1"`)) {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + SnapshotPath); err == nil {
		resp.Body.Close()
		t.Error("still answering after shutdown")
	}
}

// The snapshot is gzip-compressed when the client accepts it (a fleet view
// polls it every 2 s) and decompresses to the same document.
func TestSnapshotAPIGzip(t *testing.T) {
	snap := fixtureSnapshot(t)
	srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Now: func() time.Time { return fixedNow }})
	var want bytes.Buffer
	if err := report.WriteJSON(&want, snap); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, accept string
		gzipped      bool
	}{
		{"no header", "", false},
		{"gzip", "gzip", true},
		{"among others", "br;q=1.0, gzip;q=0.5, identity", true},
		{"refused", "gzip;q=0", false},
		{"other coding", "br", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := localRequest(http.MethodGet, SnapshotPath)
			if tt.accept != "" {
				req.Header.Set("Accept-Encoding", tt.accept)
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if got := rec.Header().Get("Content-Encoding") == "gzip"; got != tt.gzipped {
				t.Fatalf("gzip %v, want %v", got, tt.gzipped)
			}
			if tt.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, want.Bytes()) {
				t.Errorf("body differs from the document:\n%s", body)
			}
		})
	}
}
