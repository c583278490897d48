package actions

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/dispatchtop/dispatchtop/internal/termtext"
)

// decodeConfig decodes a config file strictly. The durations are first
// decoded as they are written, into strings: TOML would put a bare number
// into a Duration as nanoseconds, and as a string field it is a type error
// at its line instead.
func decodeConfig(doc []byte) (Config, error) {
	texts := reflect.New(durationTextsType())
	if err := toml.NewDecoder(bytes.NewReader(doc)).Decode(texts.Interface()); err != nil {
		return Config{}, err
	}
	var cfg Config
	if err := toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields().Decode(&cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// durationTextsType is Config's Duration fields as strings, same keys.
var durationTextsType = sync.OnceValue(func() reflect.Type {
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if f.Type == reflect.TypeFor[Duration]() {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: reflect.TypeFor[string](), Tag: f.Tag})
		}
	}
	return reflect.StructOf(fields)
})

// configKeyKinds maps every key Config knows ("stale", "resume.argv") to
// what its value must be, read from the struct's toml tags.
var configKeyKinds = sync.OnceValue(func() map[string]string {
	kinds := map[string]string{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := prefix + name
			switch {
			case f.Type == reflect.TypeFor[Duration]():
				kinds[key] = "a duration"
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, key+".")
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
				kinds[key] = "a list of strings"
			case f.Type.Kind() == reflect.String:
				kinds[key] = "a string"
			default:
				kinds[key] = "a " + f.Type.Kind().String()
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return kinds
})

// ConfigKeys lists every key of the config file, dotted ("resume.argv"),
// sorted.
func ConfigKeys() []string {
	keys := make([]string, 0, len(configKeyKinds()))
	for k := range configKeyKinds() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// configFileError turns a decoding error into one line that says where:
// "path:3: beat = 30: a duration needs a unit, e.g. "30s"", one entry for
// each unknown key with the nearest known one.
func configFileError(path string, doc []byte, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		parts := make([]string, 0, len(strict.Errors))
		for _, e := range strict.Errors {
			line, _ := e.Position()
			key, what, known := strings.Join(e.Key(), "."), "key", ConfigKeys()
			if strings.Contains(e.Error(), "missing table") {
				what, known = "table", configTables()
			}
			parts = append(parts, fmt.Sprintf("%s:%d: unknown %s %q%s", path, line, what, termtext.OneLine(key, 60), nearestHint(key, what, known)))
		}
		return errors.New(strings.Join(parts, "; "))
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	line, column := de.Position()
	msg := termtext.OneLine(strings.TrimPrefix(de.Error(), "toml: "), 0)
	key := strings.Join(de.Key(), ".")
	if key == "" {
		return fmt.Errorf("%s:%d: %s", path, line, msg)
	}
	raw := valueAt(doc, line, column)
	// A type error: say what the key wants, in the file's terms, not Go's.
	if strings.HasPrefix(msg, "cannot decode TOML") {
		switch kind := configKeyKinds()[key]; {
		case kind == "a duration" && looksNumeric(raw):
			msg = durationNeedsAUnit
		case kind == "a duration":
			msg = `a duration is a string with a unit, e.g. "30s"`
		case kind != "":
			msg = "want " + kind
		case slices.Contains(configTables(), key):
			msg = "want a table, [" + key + "]"
		}
	}
	return fmt.Errorf("%s:%d: %s = %s: %s", path, line, termtext.OneLine(key, 60), raw, msg)
}

// configTables are the tables of the config file ("merge", "resume").
func configTables() []string {
	var tables []string
	for _, k := range ConfigKeys() {
		if t, _, ok := strings.Cut(k, "."); ok && !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	return tables
}

// nearestHint names the known key (or table) nearest to name when it is a
// likely typo, else lists the known ones.
func nearestHint(name, what string, known []string) string {
	best, bestDist := "", -1
	for _, k := range known {
		if d := editDistance(name, k); bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist >= 0 && (bestDist <= 2 || bestDist <= len(name)/3) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (known " + what + "s: " + strings.Join(known, ", ") + ")"
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// valueAt is the TOML value as written at line and column (1-based; where
// a DecodeError points): a quoted string whole, else up to the next space,
// comma or comment; at most 60 runes of terminal text.
func valueAt(doc []byte, line, column int) string {
	lines := bytes.Split(doc, []byte("\n"))
	if line < 1 || line > len(lines) || column < 1 || column > len(lines[line-1]) {
		return "?"
	}
	s := strings.TrimRight(string(lines[line-1][column-1:]), "\r")
	end := len(s)
	switch {
	case strings.HasPrefix(s, `"`):
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
			} else if s[i] == '"' {
				end = i + 1
				break
			}
		}
	case strings.HasPrefix(s, "'"):
		if i := strings.IndexByte(s[1:], '\''); i >= 0 {
			end = i + 2
		}
	case strings.HasPrefix(s, "["), strings.HasPrefix(s, "{"):
		if i := strings.Index(s, " #"); i >= 0 {
			end = i
		}
	default:
		if i := strings.IndexAny(s, " \t,#]}"); i >= 0 {
			end = i
		}
	}
	return termtext.OneLine(s[:end], 60)
}

// looksNumeric reports whether a value as written is a TOML number.
func looksNumeric(raw string) bool {
	return raw != "" && strings.ContainsRune("0123456789+-.", rune(raw[0])) || raw == "inf" || raw == "nan"
}
