package termtext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Line: nothing a terminal would act on survives; everything else,
// spacing included, does.
func TestLineNeutralisesWhatATerminalActsOn(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text is kept", "A/code/2 lead", "A/code/2 lead"},
		{"indentation and runs of spaces are kept", "    \"pid\":  1", "    \"pid\":  1"},
		{"a CSI sequence loses its ESC", "\x1b[2J\x1b[31mEVIL", "�[2J�[31mEVIL"},
		{"an OSC title sequence loses ESC and BEL", "a\x1b]0;pwned\x07b", "a�]0;pwned�b"},
		{"the 8-bit CSI (C1) is replaced", "a\u009b2Jb", "a�2Jb"},
		{"a raw 0x9b byte (not UTF-8) is replaced", "a\x9b2Jb", "a�2Jb"},
		{"NUL and DEL are replaced", "a\x00b\x7fc", "a�b�c"},
		{"a newline becomes a space", "one\ntwo", "one two"},
		{"CR LF become two spaces", "one\r\ntwo", "one  two"},
		{"a tab becomes a space", "a\tb", "a b"},
		{"NEL and the Unicode line separators become spaces", "a\u0085b\u2028c\u2029d", "a b c d"},
		{"a bidirectional override is replaced", "rm \u202efdp.exe", "rm �fdp.exe"},
		{"a bidirectional isolate is replaced", "a\u2066b\u2069c", "a�b�c"},
		{"non-ASCII text is kept", "équipe 日本 ✖", "équipe 日本 ✖"},
		{"a no-break space is kept", "a\u00a0b", "a\u00a0b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// OneLine: Line's rule, and whitespace folded, ends trimmed, length capped.
func TestOneLineFoldsTrimsAndCuts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain text is kept", "merge now?", 200, "merge now?"},
		{"newlines and tabs fold into one space", "  line one\n\n\tline two \r\n", 200, "line one line two"},
		{"escapes are replaced, not folded", "\x1b[2Jwipe\x07", 200, "�[2Jwipe�"},
		{"a bidirectional override is replaced", "a\u202eb", 200, "a�b"},
		{"only whitespace is empty", " \n\t", 200, ""},
		{"long text is cut with an ellipsis", strings.Repeat("a", 300), 200, strings.Repeat("a", 200) + "…"},
		{"no cap keeps everything", strings.Repeat("ab ", 3000), 0, strings.TrimSpace(strings.Repeat("ab ", 3000))},
		{"no cap on one multi-byte rune", "é", 0, "é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OneLine(tt.in, tt.max); got != tt.want {
				t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// actsOn reports a rune of s that a terminal would act on, or -1.
func actsOn(s string) rune {
	for _, r := range s {
		if unicode.IsControl(r) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u2028' || r == '\u2029' {
			return r
		}
	}
	return -1
}

// FuzzLine: whatever the input, the output holds nothing a terminal acts
// on, keeps one rune for each of the input's, and the no-copy fast path
// agrees with the rewrite.
func FuzzLine(f *testing.F) {
	for _, seed := range []string{"", "plain", "\x1b[2J", "a\nb", "\u202e", "\x9b", "é\u0085z"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Line(in)
		if r := actsOn(got); r >= 0 {
			t.Errorf("Line(%q) = %q holds %U", in, got, r)
		}
		if utf8.RuneCountInString(got) != utf8.RuneCountInString(in) {
			t.Errorf("Line(%q) = %q changed the rune count", in, got)
		}
		if isPlain(in) && got != in {
			t.Errorf("the fast path kept %q, the rewrite gives %q", in, got)
		}
	})
}

// FuzzOneLine: whatever the input, the output is one line without stray
// spaces or anything a terminal acts on, within the cap.
func FuzzOneLine(f *testing.F) {
	for _, seed := range []string{"", " ", "merge now?", "a  b", " lead", "trail ", "x\ny", "\x1b[2J", "é\u0085z", strings.Repeat("q", 250)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := OneLine(in, 200)
		if r := actsOn(got); r >= 0 {
			t.Errorf("OneLine(%q) = %q holds %U", in, got, r)
		}
		for _, r := range got {
			if unicode.IsSpace(r) && r != ' ' {
				t.Errorf("OneLine(%q) = %q holds %U", in, got, r)
			}
		}
		if strings.Contains(got, "  ") || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") {
			t.Errorf("OneLine(%q) = %q has stray spaces", in, got)
		}
		if n := utf8.RuneCountInString(got); n > 201 {
			t.Errorf("OneLine(%q) is %d runes, over the cap", in, n)
		}
		if isTidy(in, 200) && got != in {
			t.Errorf("the fast path kept %q, the rewrite gives %q", in, got)
		}
		if uncapped := OneLine(in, 0); strings.Contains(uncapped, "…") && !strings.Contains(in, "…") {
			t.Errorf("OneLine(%q, 0) = %q was cut", in, uncapped)
		}
	})
}
