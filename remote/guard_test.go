package remote

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The guard passes the JSON on with each run of whitespace outside strings
// as one space (strings as they are, escapes included), and counts the same
// nodes however the answer is cut into reads.
func TestGuardFoldsWhitespaceAndCountsNodesAcrossReads(t *testing.T) {
	tests := []struct {
		name, in, out string
		nodes         int
	}{
		{name: "indented", in: "{\n  \"a\":  [\n    1,\n\t2\r\n  ],\n  \"s\": \"x  \\n y\"\n}\n",
			out: `{ "a": [ 1, 2 ], "s": "x  \n y" } `},
		{name: "escaped quotes and backslashes in strings", in: `{"k\"ey": "a\\", "children": [ {"id": "\\\"{["}, {} ]}`,
			out: `{"k\"ey": "a\\", "children": [ {"id": "\\\"{["}, {} ]}`, nodes: 2},
		{name: "a key escaped", in: `{"\u0073essions": [{}, {"children": [{}]}]}`, out: `{"\u0073essions": [{}, {"children": [{}]}]}`, nodes: 3},
		{name: "a value named children is no key", in: `{"id": "children", "x": [{}]}`, out: `{"id": "children", "x": [{}]}`},
	}
	for _, tt := range tests {
		for _, cut := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"a byte a read", iotest.OneByteReader}} {
			t.Run(tt.name+", "+cut.name, func(t *testing.T) {
				g := newGuard(cut.wrap(strings.NewReader(tt.in)), capsOf(1<<20, 100))
				got, err := io.ReadAll(g)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.out {
					t.Errorf("passed on %q, want %q", got, tt.out)
				}
				if g.nodes != tt.nodes {
					t.Errorf("%d nodes, want %d", g.nodes, tt.nodes)
				}
			})
		}
	}
	// A read past a cap fails with the CapError, and so does every later one.
	g := newGuard(strings.NewReader(`{"children": [{}, {}]}`), capsOf(1<<20, 1))
	if _, err := io.ReadAll(g); !errors.As(err, new(*CapError)) {
		t.Errorf("error %v, want a CapError", err)
	}
	if _, err := g.Read(make([]byte, 8)); !errors.As(err, new(*CapError)) {
		t.Errorf("a later read: %v", err)
	}
}

// quoteOrBackslash finds what bytes.IndexAny(b, `"\`) finds.
func TestQuoteOrBackslashIsIndexAny(t *testing.T) {
	for _, b := range []string{"", "abc", `a"b`, `a\b`, `a\"b`, `ab"c\d`, `ab\c"d`, `"`, `\`, `\\"`} {
		if got, want := quoteOrBackslash([]byte(b)), bytes.IndexAny([]byte(b), `"\`); got != want {
			t.Errorf("quoteOrBackslash(%q) = %d, want %d", b, got, want)
		}
	}
}
