package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version, Commit and Date are set at build time by the release build and
// `make build` (-ldflags "-X .../cli.Version=v1.2.3 -X .../cli.Commit=…
// -X .../cli.Date=…"). A `go build` or `go install` without them falls back
// to what the toolchain stamped into the binary (`go version -m` shows the
// same values), so every build can say what it is.
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

func newVersionCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(g.Stdout, "dispatchtop "+buildDescription())
			return err
		},
	}
}

// versionString is the version alone (the metrics' build info carries it).
func versionString() string {
	return describeBuild(stamp{Version, Commit, Date}, readBuildInfo()).version
}

// buildDescription is the one line `version` and `--version` print after
// the program's name: "v1.2.3 (commit 0123abcdef01, built
// 2026-11-26T12:00:00Z, go1.26.8 linux/amd64)".
func buildDescription() string {
	return describeBuild(stamp{Version, Commit, Date}, readBuildInfo()).String()
}

// stamp is what the linker was told.
type stamp struct{ version, commit, date string }

// build is what a binary knows of itself.
type build struct {
	version, commit, date string
	dirty                 bool
	goVersion, platform   string
}

func (b build) String() string {
	commit := b.commit
	if commit == "" {
		commit = "unknown"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	if b.dirty {
		commit += "-dirty"
	}
	date := b.date
	if date == "" {
		date = "unknown"
	}
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", b.version, commit, date, b.goVersion, b.platform)
}

func readBuildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// describeBuild puts the linker's stamp over the toolchain's build info:
// a module version (`go install …@v1.2.3`) or the VCS revision and time
// (`go build` in a clone).
func describeBuild(s stamp, info *debug.BuildInfo) build {
	b := build{version: s.version, commit: s.commit, date: s.date,
		goVersion: runtime.Version(), platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if info.GoVersion != "" {
			b.goVersion = info.GoVersion
		}
		if b.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.version = info.Main.Version
		}
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				if b.commit == "" {
					b.commit = kv.Value
				}
			case "vcs.time":
				if b.date == "" {
					b.date = kv.Value
				}
			case "vcs.modified":
				b.dirty = s.commit == "" && kv.Value == "true"
			}
		}
	}
	if b.version == "" {
		b.version = "dev"
	}
	return b
}
