package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// $DISPATCHTOP_CPUPROFILE makes the process write its CPU profile, whole
// once it ends, and $DISPATCHTOP_HEAPPROFILE its heap; a file that cannot be
// made is said, and the command runs.
func TestProfileEnvWritesTheProfiles(t *testing.T) {
	tests := []struct {
		name     string
		env      string
		path     func(dir string) string
		written  bool
		complain string
	}{
		{name: "cpu, a file", env: envCPUProfile, path: func(dir string) string { return filepath.Join(dir, "cpu.prof") }, written: true},
		{name: "cpu, a dir that is not there", env: envCPUProfile, path: func(dir string) string { return filepath.Join(dir, "none", "cpu.prof") }, complain: envCPUProfile},
		{name: "heap, a file", env: envHeapProfile, path: func(dir string) string { return filepath.Join(dir, "heap.prof") }, written: true},
		{name: "heap, a dir that is not there", env: envHeapProfile, path: func(dir string) string { return filepath.Join(dir, "none", "heap.prof") }, complain: envHeapProfile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t.TempDir())
			errFile, err := os.CreateTemp(t.TempDir(), "stderr")
			if err != nil {
				t.Fatal(err)
			}
			defer errFile.Close()
			stop := profile(func(k string) string {
				if k == tc.env {
					return path
				}
				return ""
			}, errFile)
			stop()
			fi, err := os.Stat(path)
			if written := err == nil && fi.Size() > 0; written != tc.written {
				t.Errorf("profile written %v (%v), want %v", written, err, tc.written)
			}
			said, _ := os.ReadFile(errFile.Name())
			if !strings.Contains(string(said), tc.complain) || (tc.complain == "" && len(said) > 0) {
				t.Errorf("stderr %q, want it to name %q", said, tc.complain)
			}
		})
	}
}
