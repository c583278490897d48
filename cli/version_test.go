package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// SPEC §4: `version` names the version, the commit, the build date, the Go
// version and the platform; the linker's stamp wins over what the
// toolchain stamped, which fills in whatever the stamp left out.
func TestVersionNamesCommitDateGoAndPlatform(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
		{Key: "vcs.modified", Value: "false"},
	}}
	dirty := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}}
	tests := []struct {
		name  string
		stamp stamp
		info  *debug.BuildInfo
		want  string
	}{
		{"a release build: the stamp", stamp{"v1.2.3", "fedcba9876543210fedcba98", "2026-11-26T12:00:00Z"}, vcs,
			"v1.2.3 (commit fedcba987654, built 2026-11-26T12:00:00Z, go1.26.8 " + platform + ")"},
		{"go build in a clone: the VCS stamp", stamp{}, vcs,
			"dev (commit 0123456789ab, built 2026-11-20T10:00:00Z, go1.26.8 " + platform + ")"},
		{"go build with uncommitted changes says so", stamp{}, dirty,
			"dev (commit 0123456789ab-dirty, built unknown, go1.26.8 " + platform + ")"},
		{"go install of a version: the module's version", stamp{}, installed,
			"v1.4.0 (commit unknown, built unknown, go1.26.8 " + platform + ")"},
		{"make build: the version given, the rest from VCS", stamp{version: "v0.9.0-3-gabc"}, vcs,
			"v0.9.0-3-gabc (commit 0123456789ab, built 2026-11-20T10:00:00Z, go1.26.8 " + platform + ")"},
		{"no build info at all", stamp{}, nil,
			"dev (commit unknown, built unknown, " + runtime.Version() + " " + platform + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeBuild(tt.stamp, tt.info).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The metrics' build info carries the version alone.
func TestVersionStringIsTheVersionAlone(t *testing.T) {
	if v := versionString(); v == "" || strings.ContainsAny(v, " ()") {
		t.Errorf("versionString() = %q, want one word", v)
	}
}
