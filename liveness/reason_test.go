package liveness

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzOneLine: whatever an agent writes, a reason built from it is one line
// without control characters, and the no-copy fast path agrees with the
// rewrite.
func FuzzOneLine(f *testing.F) {
	for _, seed := range []string{"", " ", "merge now?", "a  b", " lead", "trail ", "x\ny", "\x1b[2J", "é\u0085z", strings.Repeat("q", 250)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := OneLine(text, 200)
		if isOneLine(text, 200) && rewriteOneLine(text, 200) != text {
			t.Fatalf("fast path kept %q, the rewrite gives %q", text, rewriteOneLine(text, 200))
		}
		if strings.Contains(got, "  ") || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") {
			t.Errorf("OneLine(%q) = %q has stray spaces", text, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
				t.Errorf("OneLine(%q) = %q holds %U", text, got, r)
			}
		}
		if n := utf8.RuneCountInString(got); n > 201 {
			t.Errorf("OneLine(%q) is %d runes, over the cap", text, n)
		}
	})
}
