package codex

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dispatchtop/dispatchtop/internal/storefixtures"
	"github.com/dispatchtop/dispatchtop/sources/internal/sqlitestore"
)

// decodeRowsPlain is decodeRows' definition: the array decoded by
// encoding/json, each row a list of raw cells, each cell decoded into a
// string or an int64 by its kind.
func decodeRowsPlain(s string, kinds []cellKind) ([][]cell, bool) {
	var raw [][]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil || raw == nil {
		return nil, false
	}
	out := [][]cell{}
	for _, r := range raw {
		if len(r) != len(kinds) {
			return nil, false
		}
		row := make([]cell, len(kinds))
		for k, c := range r {
			var err error
			if kinds[k] == kindText {
				err = json.Unmarshal(c, &row[k].text)
			} else {
				err = json.Unmarshal(c, &row[k].num)
			}
			if err != nil {
				return nil, false
			}
		}
		out = append(out, row)
	}
	return out, true
}

func decodeRowsAll(s string, kinds []cellKind) ([][]cell, bool) {
	out := [][]cell{}
	ok := decodeRows(s, kinds, func(cells []cell) bool {
		out = append(out, append([]cell(nil), cells...))
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

var textInt = []cellKind{kindText, kindInteger}

var decodeRowsCases = []string{
	`[]`, ` [ ] `, `[["a",1]]`, `[["a",1],["b",-2]]`, "[ [ \"a\" ,\t1 ] ,\n[\"b\" , 2 ] ]",
	`[[null,null]]`, `[["",0]]`, `[["a\"b\\c\/d\b\f\n\r\t",0]]`, `[["\u00e9\u0000\u001f",0]]`,
	`[["\ud83d\ude00",0]]`, `[["\ud83d",0]]`, `[["\ud83dx",0]]`, `[["\ude00\ud83d",0]]`, `[["\ud83d\u0041",0]]`,
	`[["é ☃ 😀",0]]`, `[["a",9223372036854775807]]`, `[["a",-9223372036854775808]]`,
	`[["a",9223372036854775808]]`, `[["a",-9223372036854775809]]`, `[["a",99999999999999999999]]`,
	`[["a",-0]]`, `[["a",0]]`, `[["a",01]]`, `[["a",1.5]]`, `[["a",1e3]]`, `[["a",1E3]]`, `[["a",-]]`, `[["a",+1]]`,
	`[["a","1"]]`, `[[1,1]]`, `[["a",true]]`, `[["a",[]]]`, `[["a",{}]]`, `[["a"]]`, `[["a",1,2]]`, `[null]`, `null`,
	`[["a",1],]`, `[["a",1]`, `[["a",1]]x`, `[["a\x",1]]`, `[["a\u12",1]]`, "[[\"a\x01\",1]]", `[["a`, `[`, ``, ` `,
	`[["a",1] ["b",2]]`, `[["a" 1]]`, `[["a",nul]]`, `[["a",nullx]]`, `{}`, `[["a",1]] `,
}

// TestDecodeRowsIsEncodingJSONs holds decodeRows to decodeRowsPlain over
// every shape a row may take: the same rows, or a refusal of both.
func TestDecodeRowsIsEncodingJSONs(t *testing.T) {
	for _, s := range decodeRowsCases {
		t.Run(s, func(t *testing.T) {
			want, wantOK := decodeRowsPlain(s, textInt)
			got, gotOK := decodeRowsAll(s, textInt)
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeRows(%q) = %v, %v; encoding/json %v, %v", s, got, gotOK, want, wantOK)
			}
		})
	}
}

func FuzzDecodeRowsIsEncodingJSONs(f *testing.F) {
	for _, s := range decodeRowsCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			// encoding/json puts U+FFFD for each bad byte; decodeRows keeps
			// them, as the scan does (TestFastReadIsThePlainRead).
			return
		}
		want, wantOK := decodeRowsPlain(s, textInt)
		got, gotOK := decodeRowsAll(s, textInt)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeRows(%q) = %v, %v; encoding/json %v, %v", s, got, gotOK, want, wantOK)
		}
	})
}

// TestFastReadIsThePlainRead holds readFast to readPlain, a row scanned a
// thread, over what a store may hold that a thread's JSON could read
// otherwise: integers stored as text, a text in an INTEGER column, NULLs,
// blobs, text that is not UTF-8 or holds a NUL or a quote, a child of two
// edges, an edge of no thread, two rows of one id, columns an older store
// lacks, no edges table.
func TestFastReadIsThePlainRead(t *testing.T) {
	full := `CREATE TABLE threads (id, rollout_path, created_at, updated_at, updated_at_ms, cwd, title, source, archived,
		parent_thread_id, agent_nickname, agent_role)`
	edges := `CREATE TABLE thread_spawn_edges (parent_thread_id, child_thread_id, status)`
	all := `INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	tests := []struct {
		name string
		ddl  []string
		rows [][]any
	}{
		{"Codex's own rows", []string{full, edges}, [][]any{
			{"t-1", "/r/1.jsonl", 100, 200, 200000, "/w", "a title", "cli", 0, nil, "Ada", "worker"},
			{"t-0", "/r/0.jsonl", 100, 300, 300000, "/w", "the \"first\"\n", "exec", 1, "t-9", nil, nil},
		}},
		{"integers stored as text, text in an INTEGER column", []string{full}, [][]any{
			{"t-1", "", "100", " 200", "2e3", "", "", "", "1", "", "", ""},
			{"t-2", "", "not a number", "12abc", "-5", "", "", "", "yes", "", "", ""},
			{"t-3", "", 1.9, -2.5, 9.3e18, "", "", "", 0.4, "", "", ""},
		}},
		{"NULLs everywhere", []string{full, edges}, [][]any{
			{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
			{"t-1", nil, 5, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		}},
		{"blobs, and text that is not UTF-8", []string{full}, [][]any{
			{[]byte("t-\xff\xfe"), []byte{0, 1, 2}, []byte("7"), 1, 1, "\xc3(", "a\x00b", "\x80", []byte("1"), []byte("p\"\\"), "ü", "\t"},
			{"t-\u2028", "\x1f", 3, 3, 3, "\U0001F600", "\ud7ff", "", 0, "", "", ""},
		}},
		{"integers at their bounds", []string{full}, [][]any{
			{"t-1", "", int64(-9223372036854775808), int64(9223372036854775807), 0, "", "", "", -1, "", "", ""},
			{"t-2", "", "99999999999999999999", "-99999999999999999999", 0, "", "", "", 0, "", "", ""},
		}},
		{"an older store's columns", []string{`CREATE TABLE threads (id TEXT, rollout_path TEXT, created_at INTEGER, updated_at INTEGER, cwd TEXT, title TEXT, archived INTEGER)`}, nil},
		{"two rows of one id, edges of one child", []string{full, edges}, [][]any{
			{"t-1", "", 1, 1, 1, "", "first", "", 0, "", "", ""},
			{"t-1", "", 1, 1, 1, "", "second", "", 0, "", "", ""},
			{"t-2", "", 1, 1, 1, "", "", "", 0, "", "", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "state_5.sqlite")
			w := storefixtures.NewDB(t, db, append([]string{`PRAGMA journal_mode=WAL`}, tt.ddl...))
			for _, r := range tt.rows {
				if _, err := w.Exec(all, r...); err != nil {
					t.Fatal(err)
				}
			}
			if tt.rows == nil {
				if _, err := w.Exec(`INSERT INTO threads VALUES ('t-old', 'r', 1, 2, '/w', 't', 0), (NULL, NULL, NULL, NULL, NULL, NULL, NULL)`); err != nil {
					t.Fatal(err)
				}
			}
			if len(tt.ddl) > 1 {
				for _, e := range [][]any{{"t-0", "t-1", "open"}, {"t-0", "t-2", "open"}, {"t-9", "t-2", []byte("clo\xffsed")},
					{nil, "t-1", nil}, {"t-0", "t-none", "open"}, {"t-0", 7, 8}} {
					if _, err := w.Exec(`INSERT INTO thread_spawn_edges VALUES (?, ?, ?)`, e...); err != nil {
						t.Fatal(err)
					}
				}
			}
			read := func(fast bool) []thread {
				snap, err := sqlitestore.Open(db, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer snap.Close()
				schema, err := snap.Schema(threadsTable, edgesTable)
				if err != nil {
					t.Fatal(err)
				}
				have := schema.Columns(threadsTable)
				hasEdges := schema.Columns(edgesTable) != nil
				var ts []*thread
				if fast {
					var ok bool
					ts, ok, err = readFast(snap, have, hasEdges)
					if err == nil && !ok {
						t.Fatal("readFast gave way to readPlain")
					}
				} else {
					ts, err = readPlain(snap, have, hasEdges)
				}
				if err != nil {
					t.Fatal(err)
				}
				out := make([]thread, len(ts))
				for i, th := range ts {
					out[i] = *th
				}
				return out
			}
			plain, fast := read(false), read(true)
			if len(plain) == 0 {
				t.Fatal("no thread read")
			}
			if !reflect.DeepEqual(fast, plain) {
				t.Errorf("readFast differs from readPlain:\nfast  %s\nplain %s", dump(fast), dump(plain))
			}
		})
	}
}

func dump(ts []thread) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%+q\n", fmt.Sprintf("%+v", t))
	}
	return b.String()
}

// TestThreadsAreReadInOneQuery holds the work of a read: the schema's
// query and one more, which SQLite answers in one row, where the threads
// were a row each (a lock and an unlock of the connection a column
// scanned) and the edges a query and a row each of their own.
func TestThreadsAreReadInOneQuery(t *testing.T) {
	h := newHome(t)
	now := time.Now().Unix()
	for i := range 50 {
		id := fmt.Sprintf("t-%02d", i)
		h.thread(t, id, now, i%2 == 0, "")
		if i > 0 {
			h.edge(t, "t-00", id, "open")
		}
	}
	snap, err := sqlitestore.Open(h.db, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	ts, err := readSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 50 || ts[49].edgeParent != "t-00" {
		t.Fatalf("read %d threads", len(ts))
	}
	if got := snap.Queries(); got != 2 {
		t.Errorf("a read ran %d queries, want 2 (the schema, then the threads and their edges)", got)
	}
}
