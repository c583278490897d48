package jsonnum

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScanFollowsJSONsNumberGrammar: what Scan takes for a whole number is
// what encoding/json takes, and where it stops is where the number ends.
func TestScanFollowsJSONsNumberGrammar(t *testing.T) {
	tests := []struct {
		in      string
		end     int
		integer bool
		ok      bool
	}{
		{in: "0", end: 1, integer: true, ok: true},
		{in: "-0", end: 2, integer: true, ok: true},
		{in: "1234567890", end: 10, integer: true, ok: true},
		{in: "-12,", end: 3, integer: true, ok: true},
		{in: "1.5}", end: 3, ok: true},
		{in: "1e9", end: 3, ok: true},
		{in: "2.5E-3]", end: 6, ok: true},
		{in: "01", end: 1, integer: true, ok: true}, // the 1 is not this number's: the caller refuses it
		{in: "1.", ok: false},
		{in: "1.e5", ok: false},
		{in: "2e", ok: false},
		{in: "2e+", ok: false},
		{in: "-", ok: false},
		{in: "+1", ok: false},
		{in: ".5", ok: false},
		{in: "", ok: false},
		{in: "x", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			end, integer, ok := Scan([]byte(tt.in), 0)
			if ok != tt.ok || (ok && (end != tt.end || integer != tt.integer)) {
				t.Fatalf("Scan(%q) = %d, %v, %v; want %d, %v, %v", tt.in, end, integer, ok, tt.end, tt.integer, tt.ok)
			}
			if ok && end == len(tt.in) && !json.Valid([]byte(tt.in)) {
				t.Errorf("Scan took %q whole, which encoding/json refuses", tt.in)
			}
		})
	}
}

// FuzzScanAgreesWithEncodingJSON: a text Scan reads whole as a number is a
// valid JSON value, and a valid JSON number is read whole by Scan.
func FuzzScanAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{"0", "-1.5e+10", "1.", "01", "1e", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		end, _, ok := Scan([]byte(s), 0)
		whole := ok && end == len(s)
		// A valid JSON text that starts with a minus or a digit and ends
		// with a digit (no white space around it) is a number.
		isNumber := json.Valid([]byte(s)) && strings.ContainsRune("-0123456789", rune(s[0])) && isDigit(s[len(s)-1])
		if whole != isNumber {
			t.Fatalf("%q: Scan whole %v, encoding/json a number %v", s, whole, isNumber)
		}
	})
}
