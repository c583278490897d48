package themes

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func writeTheme(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SPEC §6 Themes: dark (default), light, high-contrast, mono; NO_COLOR
// selects mono; user themes come from TOML files.
func TestSelect(t *testing.T) {
	dir := t.TempDir()
	writeTheme(t, dir, "solar.toml", "running = \"#00ff00\"\n")
	writeTheme(t, dir, "broken.toml", "running = [\n")
	tests := []struct {
		name       string
		flag, conf string
		vars       map[string]string
		want       string
		wantErrs   int // the broken file always adds one
		forced     bool
	}{
		{name: "default is dark", want: Dark, wantErrs: 1},
		{name: "flag wins over config", flag: Light, conf: HighContrast, want: Light, wantErrs: 1},
		{name: "config used without flag", conf: HighContrast, want: HighContrast, wantErrs: 1},
		{name: "user theme by name", flag: "solar", want: "solar", wantErrs: 1},
		{name: "NO_COLOR selects mono", flag: Light, vars: map[string]string{"NO_COLOR": "1"}, want: Mono, wantErrs: 1, forced: true},
		{name: "empty NO_COLOR is not set", vars: map[string]string{"NO_COLOR": ""}, want: Dark, wantErrs: 1},
		{name: "unknown theme falls back to dark with an error", flag: "nope", want: Dark, wantErrs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, errs := Select(tt.flag, tt.conf, dir, env(tt.vars))
			if got := set.Themes[set.Start].Name; got != tt.want {
				t.Errorf("start theme = %q, want %q", got, tt.want)
			}
			if len(errs) != tt.wantErrs {
				t.Errorf("errors = %v, want %d", errs, tt.wantErrs)
			}
			var unknown *UnknownError
			for _, err := range errs {
				if errors.As(err, &unknown) && unknown.Name != tt.flag {
					t.Errorf("unknown theme error names %q, want %q", unknown.Name, tt.flag)
				}
			}
			if (set.Forced != "") != tt.forced {
				t.Errorf("forced = %q, want forced %v", set.Forced, tt.forced)
			}
		})
	}
}

func TestBuiltinsComplete(t *testing.T) {
	names := []string{}
	for _, th := range Builtins() {
		names = append(names, th.Name)
		if th.Name == Mono {
			if !reflect.DeepEqual(th, Theme{Name: Mono}) {
				t.Errorf("mono must carry no colour: %+v", th)
			}
			continue
		}
		v := reflect.ValueOf(th)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.Name == "Name" || f.Name == "Extends" {
				continue
			}
			if v.Field(i).String() == "" {
				t.Errorf("theme %s leaves %s empty", th.Name, f.Name)
			}
		}
	}
	if want := []string{Dark, Light, HighContrast, Mono}; !reflect.DeepEqual(names, want) {
		t.Errorf("builtins = %v, want %v", names, want)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		body    string
		check   func(t *testing.T, th Theme)
		wantErr string
	}{
		{
			name: "name from file and dark underneath",
			body: "dead = \"#aa0000\"\n",
			check: func(t *testing.T, th Theme) {
				dark, _ := Builtin(Dark)
				if th.Name != "case" || th.Dead != "#aa0000" || th.Running != dark.Running {
					t.Errorf("got %+v", th)
				}
			},
		},
		{
			name: "extends light and names itself",
			body: "name = \"paper\"\nextends = \"light\"\naccent = \"4\"\n",
			check: func(t *testing.T, th Theme) {
				light, _ := Builtin(Light)
				if th.Name != "paper" || th.Accent != "4" || th.Text != light.Text {
					t.Errorf("got %+v", th)
				}
			},
		},
		{name: "extends unknown", body: "extends = \"neon\"\n", wantErr: "extends unknown theme"},
		{name: "bad toml", body: "dead = \n", wantErr: "parse theme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "case.toml")
			writeTheme(t, dir, "case.toml", tt.body)
			th, err := LoadFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %q", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, th)
		})
	}
}

func TestDir(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{name: "XDG_CONFIG_HOME", vars: map[string]string{"XDG_CONFIG_HOME": "/cfg", "HOME": "/h"}, want: "/cfg/dispatchtop/themes"},
		{name: "HOME fallback", vars: map[string]string{"HOME": "/h"}, want: "/h/.config/dispatchtop/themes"},
		{name: "nothing", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Dir(env(tt.vars)); got != tt.want {
				t.Errorf("Dir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadDirMissingIsEmpty(t *testing.T) {
	ts, errs := LoadDir(filepath.Join(t.TempDir(), "absent"))
	if len(ts) != 0 || len(errs) != 0 {
		t.Errorf("missing dir: themes %v errs %v", ts, errs)
	}
}
