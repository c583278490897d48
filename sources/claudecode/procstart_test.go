package claudecode

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dispatchtop/dispatchtop/protocol"
)

// procStart is the platform's own words for a process's start: Linux's
// start ticks since boot, macOS's ps lstart.
func TestProcStartTime(t *testing.T) {
	boot := time.Unix(1_790_000_000, 0)
	tests := []struct {
		name, raw, goos string
		boot            time.Time
		want            time.Time
		err             string
	}{
		{name: "linux ticks: boot plus ticks / USER_HZ", raw: "123456", goos: "linux", boot: boot, want: boot.Add(1234560 * time.Millisecond)},
		{name: "linux ticks, spaces around", raw: " 100 ", goos: "linux", boot: boot, want: boot.Add(time.Second)},
		{name: "linux ticks, boot unknown: an error, not a guess", raw: "100", goos: "linux", err: "boot time is unknown"},
		{name: "ticks on macOS: an error", raw: "100", goos: "darwin", boot: boot, err: "only Linux"},
		{name: "ps lstart", raw: "Thu Nov 26 13:27:39 2026", goos: "darwin",
			want: time.Date(2026, 11, 26, 13, 27, 39, 0, time.Local)},
		{name: "ps lstart, a padded day", raw: "Mon Nov  2 08:00:01 2026", goos: "darwin",
			want: time.Date(2026, 11, 2, 8, 0, 1, 0, time.Local)},
		{name: "absent: zero, no error", raw: "", goos: "linux", boot: boot},
		{name: "neither: an error naming it", raw: "yesterday", goos: "linux", boot: boot, err: `"yesterday" is neither`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procStartTime(tt.raw, tt.boot, tt.goos)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Errorf("= %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// A real process's procStart, as Claude Code writes it, is its create
// time as the probe reads it.
func TestProcStartOfARealProcessIsItsCreateTime(t *testing.T) {
	p := sleeper(t)
	raw := procStartOf(t, p.Process.Pid)
	got, err := procStartTime(raw, bootTime(), runtime.GOOS)
	if err != nil {
		t.Fatal(err)
	}
	want, err := protocol.ProcessStarted(p.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(got.UnixNano())/1e9 - want); d > 1 {
		t.Errorf("procStart %q = %v, the process was created at %v (%.3f s apart)", raw, got, want, d)
	}
}
