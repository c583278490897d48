package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// A started that is not a number of seconds (a store's REAL may hold ±Inf)
// is an unverified value, never an output error: the document is written
// whole, the node's started null, by both writers (the streamed one and
// the document built for serve).
func TestJSONNonFiniteStartedIsNull(t *testing.T) {
	tests := []struct {
		name    string
		started float64
	}{
		{"+Inf", math.Inf(1)},
		{"-Inf", math.Inf(-1)},
		{"NaN", math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := sampleSnapshot()
			snap.Sessions[0].Heartbeat.Started = tt.started
			var streamed bytes.Buffer
			if err := WriteJSON(&streamed, snap); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			var built bytes.Buffer
			if err := EncodeDocument(&built, BuildDocument(snap)); err != nil {
				t.Fatalf("EncodeDocument(BuildDocument): %v", err)
			}
			if streamed.String() != built.String() {
				t.Errorf("the two writers differ:\n%s\n%s", streamed.String(), built.String())
			}
			var doc struct {
				Sessions []map[string]any `json:"sessions"`
			}
			if err := json.Unmarshal(streamed.Bytes(), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, streamed.String())
			}
			if got, ok := doc.Sessions[0]["started"]; !ok || got != nil {
				t.Errorf("started = %v (present %v), want null", got, ok)
			}
		})
	}
}

// The streaming encoder never fails on a float it is handed (defence in
// depth, for a document built elsewhere): a non-finite one is null, where
// encoding/json would refuse the whole document.
func TestEncodeDocumentWritesNonFiniteFloatsAsNull(t *testing.T) {
	doc := BuildDocument(sampleSnapshot())
	inf, nan := math.Inf(1), math.NaN()
	doc.Sessions[0].Started = &inf
	doc.Sessions[0].BeatAgeS = &nan
	doc.Sessions[0].Children[0].ActivityAgeS = &inf
	var buf bytes.Buffer
	if err := EncodeDocument(&buf, doc); err != nil {
		t.Fatalf("EncodeDocument: %v", err)
	}
	var back Document
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	s := back.Sessions[0]
	if s.Started != nil || s.BeatAgeS != nil || s.Children[0].ActivityAgeS != nil {
		t.Errorf("started %v, beat_age_s %v, child's activity_age_s %v: want null", s.Started, s.BeatAgeS, s.Children[0].ActivityAgeS)
	}
	if strings.Contains(buf.String(), "Inf") || strings.Contains(buf.String(), "NaN") {
		t.Errorf("a non-finite float reached the document:\n%s", buf.String())
	}
}

// The looked-up table of the bytes a string writes as they are is
// htmlSafe, byte for byte: encoding/json's escaping, kept.
func TestPlainASCIIIsHTMLSafe(t *testing.T) {
	for c := range utf8.RuneSelf {
		if plainASCII[c] != htmlSafe(byte(c)) {
			t.Errorf("byte %#x: table %v, htmlSafe %v", c, plainASCII[c], htmlSafe(byte(c)))
		}
	}
}
