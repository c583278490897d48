package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/dispatchtop/dispatchtop/model"
)

// Only the Host names serve stands for are answered: a web page that
// rebinds its own DNS name to this machine still sends that name as Host,
// and is refused (421) before anything else is looked at.
func TestHostAllowList(t *testing.T) {
	snap := fixtureSnapshot(t)
	hostname, err := os.Hostname()
	if err != nil || hostname == "" {
		t.Fatalf("os.Hostname: %q, %v", hostname, err)
	}
	tests := []struct {
		name   string
		listen string
		allow  []string
		host   string
		want   int
	}{
		{"localhost with port", "", nil, "localhost:9477", http.StatusOK},
		{"localhost", "", nil, "localhost", http.StatusOK},
		{"localhost in capitals", "", nil, "LocalHost:9477", http.StatusOK},
		{"localhost fully qualified", "", nil, "localhost.:9477", http.StatusOK},
		{"127.0.0.1", "", nil, "127.0.0.1", http.StatusOK},
		{"127.0.0.1 with port", "", nil, "127.0.0.1:9477", http.StatusOK},
		{"[::1] with port", "", nil, "[::1]:9477", http.StatusOK},
		{"[::1]", "", nil, "[::1]", http.StatusOK},
		{"a rebinding name", "", nil, "evil.example", http.StatusMisdirectedRequest},
		{"a rebinding name with port", "", nil, "evil.example:9477", http.StatusMisdirectedRequest},
		{"no host", "", nil, "", http.StatusMisdirectedRequest},
		{"localhost as a subdomain", "", nil, "localhost.evil.example:9477", http.StatusMisdirectedRequest},
		{"loopback address as a subdomain", "", nil, "127.0.0.1.evil.example", http.StatusMisdirectedRequest},
		{"another address on a loopback listen", "", nil, "192.0.2.7:9477", http.StatusMisdirectedRequest},
		{"the listen address", "192.0.2.7:9477", nil, "192.0.2.7:9477", http.StatusOK},
		{"loopback beside the listen address", "192.0.2.7:9477", nil, "localhost:9477", http.StatusOK},
		{"a neighbour of the listen address", "192.0.2.7:9477", nil, "192.0.2.8:9477", http.StatusMisdirectedRequest},
		{"the listen name", "box.example:9477", nil, "BOX.example:9477", http.StatusOK},
		{"an allowed name", "", []string{"dispatch.example.com"}, "dispatch.example.com:443", http.StatusOK},
		{"an allowed name given with a port", "", []string{"Dispatch.example.com:9477"}, "dispatch.example.com", http.StatusOK},
		{"an allowed name does not open others", "", []string{"dispatch.example.com"}, "evil.example", http.StatusMisdirectedRequest},
		{"an empty allowed name does not open an empty Host", "", []string{"", " "}, "", http.StatusMisdirectedRequest},
		{"any address on a wildcard listen", "0.0.0.0:9477", nil, "192.0.2.7:9477", http.StatusOK},
		{"an IPv6 address on a wildcard listen", "[::]:9477", nil, "[2001:db8::1]:9477", http.StatusOK},
		{"the machine's name on a wildcard listen", "0.0.0.0:9477", nil, hostname + ":9477", http.StatusOK},
		{"a rebinding name on a wildcard listen", "0.0.0.0:9477", nil, "evil.example:9477", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Options{Snapshot: func() *model.Snapshot { return snap }, Listen: tt.listen, AllowHosts: tt.allow})
			req := httptest.NewRequest(http.MethodGet, SnapshotPath, nil)
			req.Host = tt.host
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("Host %q: status %d, want %d", tt.host, rec.Code, tt.want)
			}
			if tt.want == http.StatusMisdirectedRequest {
				body := rec.Body.String()
				if strings.Count(body, "\n") != 1 || !strings.Contains(body, "--allow-host") {
					t.Errorf("refusal body %q, want one line naming --allow-host", body)
				}
			}
		})
	}
}

// A refused Host is refused before the token is asked for: a rebinding page
// learns nothing, not even that a token would open the door.
func TestHostCheckedBeforeToken(t *testing.T) {
	srv := New(Options{Snapshot: func() *model.Snapshot { return fixtureSnapshot(t) }, Token: "s3cret"})
	req := httptest.NewRequest(http.MethodGet, SnapshotPath, nil)
	req.Host = "evil.example:9477"
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("status %d, challenge %q; want 421 without a challenge", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

// --allow-host takes a host name or address, with or without a port, and
// nothing else.
func TestValidateAllowHost(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"box.example", true},
		{"box.example:9477", true},
		{"192.0.2.7", true},
		{"[2001:db8::1]:9477", true},
		{"", false},
		{"  ", false},
		{"http://box.example", false},
		{"box.example/metrics", false},
		{"user@box.example", false},
		{"box example", false},
		{":9477", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAllowHost(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateAllowHost(%q) = %v, want ok %v", tt.name, err, tt.ok)
			}
			if err != nil && (!strings.Contains(err.Error(), "--allow-host") || strings.Contains(err.Error(), "\n")) {
				t.Errorf("error %q, want one line naming --allow-host", err)
			}
		})
	}
}
