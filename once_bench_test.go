package main

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/cli"
	"github.com/dispatchtop/dispatchtop/internal/treegen"
)

// BenchmarkOnceJSONInProcess is `--once --json` run in this process, over the
// trees of BenchmarkOnceJSON10k (1,000 sessions × 10) and of SPEC §8's
// 100,000 nodes (10,000 × 10): what a CPU or heap profile of the once path
// sees, without a process start around it.
func BenchmarkOnceJSONInProcess(b *testing.B) {
	for _, sessions := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("%dk", sessions*10/1000), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), ".sessions")
			if err := treegen.Generate(dir, sessions, 10, 3, time.Now()); err != nil {
				b.Fatal(err)
			}
			b.Setenv("XDG_CONFIG_HOME", filepath.Join(b.TempDir(), "config"))
			args := []string{"--once", "--json", "--fail-on", "none", dir}
			b.ResetTimer()
			for b.Loop() {
				if code := cli.Execute(args, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("--once --json: exit code %d", code)
				}
			}
		})
	}
}
