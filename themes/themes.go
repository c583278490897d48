package themes

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Theme is a palette: every colour the ui uses, as a colour string Lip Gloss
// understands ("#rrggbb" or an ANSI index such as "9"). An empty colour
// means "the terminal's own": the mono theme is all empty, so every state
// must read from its glyph and word alone.
type Theme struct {
	Name string `toml:"name"`
	// Extends names the built-in theme a user theme starts from ("dark"
	// when empty); the fields a user file sets override it.
	Extends string `toml:"extends"`

	Text      string `toml:"text"`      // ordinary text
	Muted     string `toml:"muted"`     // guides, ages, secondary columns
	Accent    string `toml:"accent"`    // title, key names in help
	Border    string `toml:"border"`    // dialog and pane borders
	HeaderBg  string `toml:"header_bg"` // the header bar
	HeaderFg  string `toml:"header_fg"`
	SelectBg  string `toml:"select_bg"` // the selected row
	SelectFg  string `toml:"select_fg"`
	Running   string `toml:"running"`
	Dead      string `toml:"dead"`
	Finished  string `toml:"finished"`
	Missing   string `toml:"missing"`
	Warning   string `toml:"warning"`   // stalled, kill candidates, NFS warning
	Blocked   string `toml:"blocked"`   // waiting for a human
	ActionFg  string `toml:"action"`    // the recommended action
	ErrorFg   string `toml:"error"`     // refusals and errors in the status line
	SuccessFg string `toml:"success"`   // completed actions in the status line
	DialogBg  string `toml:"dialog_bg"` // the confirmation dialog
}

// Built-in theme names.
const (
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
	Mono         = "mono"
)

// Builtins returns the built-in themes, default first.
func Builtins() []Theme {
	return []Theme{
		{
			Name: Dark, Text: "#d0d0d0", Muted: "#7a7a7a", Accent: "#87afff", Border: "#5f5f87",
			HeaderBg: "#303050", HeaderFg: "#e4e4e4", SelectBg: "#3a3a5a", SelectFg: "#ffffff",
			Running: "#5fd75f", Dead: "#ff5f5f", Finished: "#5fafff", Missing: "#d7af5f",
			Warning: "#ffaf00", Blocked: "#d787ff", ActionFg: "#ffd75f", ErrorFg: "#ff5f5f",
			SuccessFg: "#5fd75f", DialogBg: "#262636",
		},
		{
			Name: Light, Text: "#262626", Muted: "#6c6c6c", Accent: "#005fd7", Border: "#8787af",
			HeaderBg: "#d7d7ff", HeaderFg: "#1c1c1c", SelectBg: "#d0e4ff", SelectFg: "#000000",
			Running: "#007a00", Dead: "#c00000", Finished: "#0050b0", Missing: "#8a6000",
			Warning: "#b35900", Blocked: "#8700af", ActionFg: "#875f00", ErrorFg: "#c00000",
			SuccessFg: "#007a00", DialogBg: "#f0f0f8",
		},
		{
			// ANSI indices: the terminal's own brightest colours.
			Name: HighContrast, Text: "15", Muted: "7", Accent: "14", Border: "15",
			HeaderBg: "15", HeaderFg: "0", SelectBg: "11", SelectFg: "0",
			Running: "10", Dead: "9", Finished: "14", Missing: "11",
			Warning: "11", Blocked: "13", ActionFg: "12", ErrorFg: "9",
			SuccessFg: "10", DialogBg: "0",
		},
		{Name: Mono},
	}
}

// on16 are the colours of each built-in theme on a terminal of 16 colours
// (TERM=xterm), ANSI indices chosen apart: brought down by nearness alone,
// dead, the warning flags and the actions of dark and light all became
// the same red. high-contrast is in ANSI indices already; mono has none.
var on16 = map[string]Theme{
	Dark: {
		Text: "7", Muted: "8", Accent: "12", Border: "8",
		HeaderBg: "4", HeaderFg: "15", SelectBg: "4", SelectFg: "15",
		Running: "10", Dead: "9", Finished: "12", Missing: "3",
		Warning: "11", Blocked: "13", ActionFg: "14", ErrorFg: "9",
		SuccessFg: "10", DialogBg: "0",
	},
	Light: {
		Text: "0", Muted: "8", Accent: "4", Border: "8",
		HeaderBg: "7", HeaderFg: "0", SelectBg: "6", SelectFg: "0",
		Running: "2", Dead: "1", Finished: "4", Missing: "8",
		Warning: "3", Blocked: "5", ActionFg: "6", ErrorFg: "1",
		SuccessFg: "2", DialogBg: "7",
	},
}

// On16 is t for a terminal of 16 colours: a built-in theme's own 16
// colours, a user theme those of the theme it extends (dark by default);
// high-contrast and mono as they are.
func On16(t Theme) Theme {
	family := t.Name
	if _, ok := on16[family]; !ok {
		family = cmp.Or(t.Extends, Dark)
	}
	c, ok := on16[family]
	if !ok {
		return t
	}
	c.Name, c.Extends = t.Name, t.Extends
	return c
}

// Builtin returns the built-in theme name.
func Builtin(name string) (Theme, bool) {
	for _, t := range Builtins() {
		if t.Name == name {
			return t, true
		}
	}
	return Theme{}, false
}

// Dir is where user themes live: $XDG_CONFIG_HOME/dispatchtop/themes, or
// ~/.config/dispatchtop/themes. getenv is os.Getenv in production.
func Dir(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "dispatchtop", "themes")
}

// LoadFile reads one user theme. Its name is the file's base name without
// .toml unless the file names itself; fields it leaves out come from the
// theme it extends (dark by default).
func LoadFile(path string) (Theme, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Theme{}, fmt.Errorf("read theme %s: %w", path, err)
	}
	var user Theme
	if err := toml.Unmarshal(b, &user); err != nil {
		return Theme{}, fmt.Errorf("parse theme %s: %w", path, err)
	}
	baseName := user.Extends
	if baseName == "" {
		baseName = Dark
	}
	base, ok := Builtin(baseName)
	if !ok {
		return Theme{}, fmt.Errorf("theme %s: extends unknown theme %q", path, baseName)
	}
	t := overlay(base, user)
	t.Name = user.Name
	if t.Name == "" {
		t.Name = strings.TrimSuffix(filepath.Base(path), ".toml")
	}
	t.Extends = baseName
	return t, nil
}

// overlay returns base with every non-empty colour of top.
func overlay(base, top Theme) Theme {
	pick := func(b, t string) string {
		if t != "" {
			return t
		}
		return b
	}
	base.Text = pick(base.Text, top.Text)
	base.Muted = pick(base.Muted, top.Muted)
	base.Accent = pick(base.Accent, top.Accent)
	base.Border = pick(base.Border, top.Border)
	base.HeaderBg = pick(base.HeaderBg, top.HeaderBg)
	base.HeaderFg = pick(base.HeaderFg, top.HeaderFg)
	base.SelectBg = pick(base.SelectBg, top.SelectBg)
	base.SelectFg = pick(base.SelectFg, top.SelectFg)
	base.Running = pick(base.Running, top.Running)
	base.Dead = pick(base.Dead, top.Dead)
	base.Finished = pick(base.Finished, top.Finished)
	base.Missing = pick(base.Missing, top.Missing)
	base.Warning = pick(base.Warning, top.Warning)
	base.Blocked = pick(base.Blocked, top.Blocked)
	base.ActionFg = pick(base.ActionFg, top.ActionFg)
	base.ErrorFg = pick(base.ErrorFg, top.ErrorFg)
	base.SuccessFg = pick(base.SuccessFg, top.SuccessFg)
	base.DialogBg = pick(base.DialogBg, top.DialogBg)
	return base
}

// LoadDir reads every *.toml theme in dir, sorted by name. A missing dir is
// no themes and no error; a broken file is reported and skipped, so one bad
// file does not hide the others.
func LoadDir(dir string) ([]Theme, []error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("read themes dir %s: %w", dir, err)}
	}
	var out []Theme
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		t, err := LoadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

// Set is the list of themes `t` cycles through and the one to start with.
type Set struct {
	Themes []Theme
	Start  int // index into Themes
	// Forced is why the start was not the one asked for ("NO_COLOR is set"),
	// or "" when it was.
	Forced string
}

// Select builds the theme set: the built-ins, then the user themes of dir.
// The start is the flag's theme, else the config's, else dark; NO_COLOR
// (any non-empty value) forces mono. An unknown name is an error that lists
// the known ones.
func Select(flagName, configName, dir string, getenv func(string) string) (Set, []error) {
	all := Builtins()
	user, errs := LoadDir(dir)
	for _, u := range user {
		replaced := false
		for i := range all {
			if all[i].Name == u.Name { // a user file may redefine a built-in
				all[i] = u
				replaced = true
			}
		}
		if !replaced {
			all = append(all, u)
		}
	}
	set := Set{Themes: all}
	if v := getenv("NO_COLOR"); v != "" {
		set.Start = indexOf(all, Mono)
		set.Forced = "NO_COLOR is set"
		return set, errs
	}
	want := flagName
	if want == "" {
		want = configName
	}
	if want == "" {
		want = Dark
	}
	i := indexOf(all, want)
	if i < 0 {
		names := make([]string, len(all))
		for k, t := range all {
			names[k] = t.Name
		}
		errs = append(errs, &UnknownError{Name: want, Known: names})
		i = 0
	}
	set.Start = i
	return set, errs
}

// UnknownError is a theme name that is neither built in nor a user file.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown theme %q (known: %s)", e.Name, strings.Join(e.Known, ", "))
}

func indexOf(ts []Theme, name string) int {
	return slices.IndexFunc(ts, func(t Theme) bool { return t.Name == name })
}
