package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// $DISPATCHTOP_CPUPROFILE makes the process write its CPU profile, whole
// once it ends; a file that cannot be made is said, and the command runs.
func TestCPUProfileEnvWritesTheProfile(t *testing.T) {
	tests := []struct {
		name     string
		path     func(dir string) string
		written  bool
		complain string
	}{
		{name: "a file", path: func(dir string) string { return filepath.Join(dir, "cpu.prof") }, written: true},
		{name: "a dir that is not there", path: func(dir string) string { return filepath.Join(dir, "none", "cpu.prof") }, complain: cpuProfileEnv},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t.TempDir())
			t.Setenv(cpuProfileEnv, path)
			var out, errs bytes.Buffer
			if code := Execute([]string{"--version"}, strings.NewReader(""), &out, &errs); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errs.String())
			}
			fi, err := os.Stat(path)
			if written := err == nil && fi.Size() > 0; written != tc.written {
				t.Errorf("profile written %v (%v), want %v", written, err, tc.written)
			}
			if !strings.Contains(errs.String(), tc.complain) || (tc.complain == "" && errs.Len() > 0) {
				t.Errorf("stderr %q, want it to name %q", errs.String(), tc.complain)
			}
		})
	}
}
