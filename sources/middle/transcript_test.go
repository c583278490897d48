package middle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The beat a transcript gives is its last line's timestamp that parses,
// as middle's readTranscriptState takes it; a torn or timeless tail falls
// back to an earlier line, and none gives zero.
func TestLastTranscriptTime(t *testing.T) {
	tests := []struct {
		name, content string
		want          time.Time
	}{
		{name: "the last line with a timestamp", content: `{"timestamp":"2025-06-23T17:31:00Z"}` + "\n" + `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n",
			want: time.UnixMilli(transcriptMs)},
		{name: "lines without one are passed over", content: `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n" + `{"type":"summary"}` + "\n",
			want: time.UnixMilli(transcriptMs)},
		{name: "a torn last line is passed over", content: `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n" + `{"timestamp":"2025-06-23T17:4`,
			want: time.UnixMilli(transcriptMs)},
		{name: "a timestamp that does not parse is passed over", content: `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n" + `{"timestamp":"soon"}` + "\n",
			want: time.UnixMilli(transcriptMs)},
		{name: "no timestamp at all is zero", content: `{"type":"summary"}` + "\n"},
		{name: "an empty transcript is zero"},
		{name: "a tail of one long line is read further back", content: `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n" + `{"type":"tool_result","content":"` + strings.Repeat("x", transcriptTail) + `"}` + "\n",
			want: time.UnixMilli(transcriptMs)},
		{name: "no further back than a MiB", content: `{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n" + strings.Repeat(`{"type":"x"}`+"\n", (1<<20)/13+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := lastTranscriptTime(p)
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func FuzzLastTranscriptTime(f *testing.F) {
	f.Add([]byte(`{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\n"))
	f.Add([]byte(`{"timestamp":"2025-06-23T17:32:30.5Z"}` + "\r\n" + `{"timestamp":12}`))
	f.Add([]byte("\x00\xff{\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := lastTranscriptTime(p)
		if err != nil {
			t.Fatalf("a regular file read with an error: %v", err)
		}
		if !got.IsZero() && !strings.Contains(string(content), "timestamp") {
			t.Fatalf("a time %v from a transcript with no timestamp", got)
		}
	})
}
