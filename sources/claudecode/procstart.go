package claudecode

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's starttime: 100 on
// every Linux the kernel's ABI promises (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

// lstartLayout is `ps -o lstart=` on macOS ("Thu Nov 26 13:27:39 2026"),
// in the host's local time.
const lstartLayout = "Mon Jan _2 15:04:05 2006"

// procStartTime turns a session file's procStart into the process's create
// time. Claude Code writes the platform's own words for it: on Linux the
// start ticks of /proc/<pid>/stat (field 22, clock ticks since boot), which
// need the boot time; on macOS the `ps` lstart text. boot is the host's
// boot time (zero: unknown). An empty procStart is absent, not an error.
func procStartTime(raw string, boot time.Time, goos string) (time.Time, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return time.Time{}, nil
	}
	if ticks, err := strconv.ParseUint(raw, 10, 64); err == nil {
		if goos != "linux" {
			return time.Time{}, fmt.Errorf("%q is start ticks, which only Linux counts", raw)
		}
		if boot.IsZero() {
			return time.Time{}, fmt.Errorf("%q is start ticks, and the boot time is unknown", raw)
		}
		return boot.Add(time.Duration(ticks) * time.Second / clockTicks), nil
	}
	t, err := time.ParseInLocation(lstartLayout, strings.Join(strings.Fields(raw), " "), time.Local)
	if err != nil {
		// time's _2 wants a padded day: Fields collapsed it.
		t, err = time.ParseInLocation("Mon Jan 2 15:04:05 2006", strings.Join(strings.Fields(raw), " "), time.Local)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither start ticks nor a ps lstart time", raw)
	}
	return t, nil
}

// bootTime reads the host's boot time (btime of /proc/stat) on Linux; zero
// elsewhere or when it cannot be read.
func bootTime() time.Time {
	if runtime.GOOS != "linux" {
		return time.Time{}
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}
