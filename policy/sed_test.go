package policy

import (
	"slices"
	"testing"
)

func TestSedEffects(t *testing.T) {
	for _, tc := range []struct {
		script    string
		writes    []string
		runs      []string
		runsInput bool
		ok        bool
	}{
		{"s/hello/world/g", nil, nil, false, true},
		{"/wee/p", nil, nil, false, true},
		{"w out/x", []string{"out/x"}, nil, false, true},
		{"$w package.json", []string{"package.json"}, nil, false, true},
		{"/a/,/b/W f", []string{"f"}, nil, false, true},
		{"s/a/b/w f", []string{"f"}, nil, false, true},
		{"s|a|b|gw f", []string{"f"}, nil, false, true},
		{"1e rm -rf x", nil, []string{"rm -rf x"}, false, true},
		{"e", nil, nil, true, true},
		{"s/.*/ls/e", nil, nil, true, true},
		{"p;w a\nw b", []string{"a", "b"}, nil, false, true},
		{"y/abc/xyz/", nil, nil, false, true},
		{"1d;$d", nil, nil, false, true},
		{"/x/{p;q}", nil, nil, false, true},
		{"a text w not a write", nil, nil, false, true},
		{"s/a", nil, nil, false, false},
		{"k", nil, nil, false, false},
	} {
		w, r, ri, ok := sedEffects(tc.script)
		if ok != tc.ok || (ok && (!slices.Equal(w, tc.writes) || !slices.Equal(r, tc.runs) || ri != tc.runsInput)) {
			t.Errorf("sedEffects(%q) = %q %q %v %v, want %q %q %v %v", tc.script, w, r, ri, ok, tc.writes, tc.runs, tc.runsInput, tc.ok)
		}
	}
}

// FuzzSedEffects: any script ends, without a panic.
func FuzzSedEffects(f *testing.F) {
	for _, s := range []string{"s/a/b/w f", "1e rm", "/x/{p;q}", "y/a/b/", `\%x%p`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sedEffects(s)
	})
}
