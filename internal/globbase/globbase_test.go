package globbase

import "testing"

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ pat, base, rest string }{
		{"*.go", ".", "*.go"},
		{"src/**/*.go", "src", "**/*.go"},
		{"../../etc/*", "../../etc", "*"},
		{"/etc/*", "/etc", "*"},
		{"/*", "/", "*"},
		{"a/b/c", "a/b", "c"},
		{"{src,lib}/*.go", ".", "{src,lib}/*.go"},
		{`a\b/*`, ".", `a\b/*`},
	} {
		if base, rest := Split(tc.pat); base != tc.base || rest != tc.rest {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tc.pat, base, rest, tc.base, tc.rest)
		}
	}
}

func TestStaysUnder(t *testing.T) {
	for rest, want := range map[string]bool{
		"*.go":       true,
		"**/*.go":    true,
		"{a,b}/*.go": true,
		"*/../..":    false,
		"{..,x}/*":   false,
		"{/etc,src}": false,
		`..\..\*`:    false,
		"~/*":        false,
	} {
		if got := StaysUnder(rest); got != want {
			t.Errorf("StaysUnder(%q) = %v, want %v", rest, got, want)
		}
	}
}
