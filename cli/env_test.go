package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// SPEC §4.2: every flag of serve can come from DISPATCHTOP_<FLAG>; a flag
// given on the command line wins; a repeatable flag takes a comma-separated
// list; a value the flag refuses is bad usage naming the variable.
func TestServeFlagsComeFromTheEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    string // the flags' values after parsing, as "listen roots max-conns stale stale-given"
		wantErr string
	}{
		{name: "nothing set: the defaults", want: "127.0.0.1:9477 [] 256 2m0s false"},
		{name: "variables set the flags",
			env:  map[string]string{"DISPATCHTOP_LISTEN": "0.0.0.0:9000", "DISPATCHTOP_MAX_CONNS": "8", "DISPATCHTOP_STALE": "90s"},
			want: "0.0.0.0:9000 [] 8 1m30s true"},
		{name: "a flag given wins over its variable",
			args: []string{"--max-conns", "3"}, env: map[string]string{"DISPATCHTOP_MAX_CONNS": "8"},
			want: "127.0.0.1:9477 [] 3 2m0s false"},
		{name: "a repeatable flag takes a comma-separated list",
			env:  map[string]string{"DISPATCHTOP_ROOT": "/a/.sessions,teaparty:/b/.teaparty"},
			want: "127.0.0.1:9477 [/a/.sessions teaparty:/b/.teaparty] 256 2m0s false"},
		{name: "roots given as arguments: DISPATCHTOP_ROOT adds none",
			args: []string{"/c"}, env: map[string]string{"DISPATCHTOP_ROOT": "/a"},
			want: "127.0.0.1:9477 [] 256 2m0s false"},
		{name: "a bad value names its variable",
			env: map[string]string{"DISPATCHTOP_MAX_CONNS": "many"}, wantErr: `DISPATCHTOP_MAX_CONNS="many"`},
		{name: "a duration without a unit names its variable",
			env: map[string]string{"DISPATCHTOP_STALE": "90"}, wantErr: `DISPATCHTOP_STALE="90"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, g := newRootCmd(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
			cmd, _, err := root.Find([]string{"serve"})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			var runErr error
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
				if runErr = flagsFromEnv(cmd, serveEnv(args, lookup)); runErr != nil {
					return nil
				}
				fs := cmd.Flags()
				listen, _ := fs.GetString("listen")
				conns, _ := fs.GetInt("max-conns")
				got = fmt.Sprintf("%s %v %d %s %v", listen, g.Roots, conns, g.Stale, fs.Changed("stale"))
				return nil
			}
			root.SetArgs(append([]string{"serve"}, tt.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if runErr == nil || !strings.Contains(runErr.Error(), tt.wantErr) || !isUsage(runErr) {
					t.Fatalf("error %v, want bad usage naming %s", runErr, tt.wantErr)
				}
				return
			}
			if runErr != nil {
				t.Fatal(runErr)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func isUsage(err error) bool {
	e, ok := err.(*ExitError)
	return ok && e.Code == ExitUsage
}

// The real binary, as a service manager starts it: its roots and its token
// file from the environment alone.
func TestServeFromTheEnvironmentEndToEnd(t *testing.T) {
	root := serveTree(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, []string{"DISPATCHTOP_ROOT=" + root, "DISPATCHTOP_TOKEN_FILE=" + tokenFile})
	if code, _ := get(t, p.url+"/api/v1/snapshot", ""); code != 401 {
		t.Errorf("without the token of DISPATCHTOP_TOKEN_FILE: %d, want 401", code)
	}
	code, body := get(t, p.url+"/api/v1/snapshot", "s3cret")
	if code != 200 || !bytes.Contains(body, []byte(`"id": "S1"`)) {
		t.Errorf("with the token: %d, want 200 and the tree of DISPATCHTOP_ROOT: %.300s", code, body)
	}
}
