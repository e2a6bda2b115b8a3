package policy

import (
	"slices"
	"testing"
)

func TestSedEffects(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   sedEffect
		ok     bool
	}{
		{"s/hello/world/g", sedEffect{}, true},
		{"/wee/p", sedEffect{}, true},
		{"w out/x", sedEffect{writes: []string{"out/x"}}, true},
		{"$w package.json", sedEffect{writes: []string{"package.json"}}, true},
		{"/a/,/b/W f", sedEffect{writes: []string{"f"}}, true},
		{"s/a/b/w f", sedEffect{writes: []string{"f"}}, true},
		{"s|a|b|gw f", sedEffect{writes: []string{"f"}}, true},
		{"1e rm -rf x", sedEffect{runs: []string{"rm -rf x"}}, true},
		{"e", sedEffect{runsInput: true}, true},
		{"s/.*/ls/e", sedEffect{runsInput: true}, true},
		{"p;w a\nw b", sedEffect{writes: []string{"a", "b"}}, true},
		{"y/abc/xyz/", sedEffect{}, true},
		{"1d;$d", sedEffect{}, true},
		{"/x/{p;q}", sedEffect{}, true},
		{"a text w not a write", sedEffect{}, true},
		{"R .env", sedEffect{reads: []string{".env"}}, true},
		{"1r /etc/passwd\np", sedEffect{reads: []string{"/etc/passwd"}}, true},
		{"s/a", sedEffect{}, false},
		{"k", sedEffect{}, false},
	} {
		got, ok := sedEffects(tc.script)
		w := tc.want
		if ok != tc.ok || (ok && (!slices.Equal(got.writes, w.writes) || !slices.Equal(got.reads, w.reads) ||
			!slices.Equal(got.runs, w.runs) || got.runsInput != w.runsInput)) {
			t.Errorf("sedEffects(%q) = %+v %v, want %+v %v", tc.script, got, ok, w, tc.ok)
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
