package actions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Duration is a TOML duration string with a unit, such as "30s"; zero
// when absent. A bare number is refused (decodeConfig): 30 is not 30 ns.
type Duration time.Duration

// Duration converts d to a time.Duration.
func (d Duration) Duration() time.Duration { return time.Duration(d) }

// UnmarshalText parses a Go duration string ("30s", "2m"), which must be
// positive: a threshold of zero would say every node is late.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return errors.New(durationNeedsAUnit)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New(`not a duration (e.g. "30s", "2m")`)
	}
	if v <= 0 {
		return errors.New("a duration must be positive")
	}
	*d = Duration(v)
	return nil
}

// durationNeedsAUnit is what a number written for a duration is told.
const durationNeedsAUnit = `a duration needs a unit, e.g. "30s"`

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// CommandConfig is the command a resume or merge runs: argv with placeholders.
type CommandConfig struct {
	Argv []string `toml:"argv"`
}

// Config is the operator's configuration (SPEC §5.5).
type Config struct {
	Resume    CommandConfig `toml:"resume"`
	Merge     CommandConfig `toml:"merge"`
	Beat      Duration      `toml:"beat"`
	Stale     Duration      `toml:"stale"`
	KillAfter Duration      `toml:"kill_after"`
	ExitGrace Duration      `toml:"exit_grace"`
	Ignore    []string      `toml:"ignore"`
	Theme     string        `toml:"theme"`
}

// maxConfigSize bounds the config file we are willing to read.
const maxConfigSize = 1 << 20

// DefaultConfigPath is $XDG_CONFIG_HOME/dispatchtop/config.toml, with
// XDG_CONFIG_HOME defaulting to ~/.config; "" when neither an absolute
// XDG_CONFIG_HOME nor a home directory says where that is (cron, systemd,
// a bare CI job): then there is no default file, as when it does not exist.
func DefaultConfigPath() string {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "dispatchtop", "config.toml")
}

// LoadConfig reads the configuration of a command that may act (kill,
// resume, compact, merge, recover --apply, the dashboard with actions armed)
// from explicitPath, or from the default location when explicitPath is "".
// It returns the config, the path it was read from ("" when no default file
// exists) and an error for an unreadable or malformed file, a missing
// explicit file, or a file inside any of roots: a writable sessions
// directory must not choose what an operator's keypress runs.
func LoadConfig(explicitPath string, roots []string) (Config, string, error) {
	abs, err := configPath(explicitPath)
	if err != nil || abs == "" {
		return Config{}, "", err
	}
	// Refuse before reading: the file's content must never matter here.
	if root, inside := ConfigInsideRoot(abs, roots); inside {
		return Config{}, "", fmt.Errorf("config %s is inside the watched root %s: actions refused (a watched directory must not choose what runs; keep the config outside every root, or name narrower roots)", abs, root)
	}
	return readConfig(abs, explicitPath != "")
}

// LoadReadOnlyConfig reads the configuration of a command that runs no
// action (--once, the dashboard under --readonly, recover without --apply):
// as LoadConfig, but wherever the file lies, inside a root or not. There
// the config only sets what is shown (thresholds, ignore globs, theme); the
// rule of LoadConfig guards what runs.
func LoadReadOnlyConfig(explicitPath string) (Config, string, error) {
	abs, err := configPath(explicitPath)
	if err != nil || abs == "" {
		return Config{}, "", err
	}
	return readConfig(abs, explicitPath != "")
}

// ConfigInsideRoot reports the root of roots that holds the config at path,
// if any, comparing both as given and with symlinks resolved.
func ConfigInsideRoot(path string, roots []string) (root string, inside bool) {
	return insideAnyRoot(path, roots)
}

// configPath is the absolute path of the config: explicitPath, else the
// default location; "" when there is no default location.
func configPath(explicitPath string) (string, error) {
	path := explicitPath
	if path == "" {
		if path = DefaultConfigPath(); path == "" {
			return "", nil
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("config %s: %w", path, err)
	}
	return abs, nil
}

// readConfig reads and checks the config file at abs. A default file that
// does not exist is an empty config; anything but a regular file is refused
// before a byte is read, so a FIFO left at the path cannot block the
// command.
func readConfig(abs string, explicit bool) (Config, string, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return Config{}, "", nil
		}
		return Config{}, "", fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return Config{}, "", fmt.Errorf("read config %s: %w", abs, err)
	} else if !st.Mode().IsRegular() {
		return Config{}, "", fmt.Errorf("read config %s: not a regular file (%s)", abs, st.Mode().Type())
	}
	b, err := readCapped(f, maxConfigSize)
	if err != nil {
		return Config{}, "", fmt.Errorf("read config %s: %w", abs, err)
	}
	cfg, err := decodeConfig(b)
	if err != nil {
		return Config{}, "", configFileError(abs, b, err)
	}
	if err := joinErrors(checkCommandName("resume.argv", cfg.Resume.Argv), checkCommandName("merge.argv", cfg.Merge.Argv)); err != nil {
		return Config{}, "", fmt.Errorf("config %s: %w", abs, err)
	}
	return cfg, abs, nil
}

// insideAnyRoot reports whether path lies in (or is) one of roots, comparing
// both as given and with symlinks resolved, so a link cannot smuggle a
// root's file in.
func insideAnyRoot(path string, roots []string) (string, bool) {
	candidates := []string{filepath.Clean(path)}
	if real, err := resolveExisting(path); err == nil {
		candidates = append(candidates, real)
	}
	for _, r := range roots {
		absRoot, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		rootForms := []string{filepath.Clean(absRoot)}
		if real, err := filepath.EvalSymlinks(absRoot); err == nil {
			rootForms = append(rootForms, real)
		}
		for _, c := range candidates {
			for _, rf := range rootForms {
				if within(rf, c) {
					return absRoot, true
				}
			}
		}
	}
	return "", false
}

// resolveExisting resolves symlinks in the longest existing prefix of path.
func resolveExisting(path string) (string, error) {
	dir, rest := filepath.Clean(path), ""
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

var errTooLarge = errors.New("file too large")

// readCapped reads r up to limit bytes; more is an error.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", errTooLarge, limit)
	}
	return b, nil
}
