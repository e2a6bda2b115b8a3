package policy

import "testing"

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		root, p string
		rel     string
		ok      bool
	}{
		{"/ws", "/ws", ".", true},
		{"/ws", "/ws/a/b", "a/b", true},
		{"/ws/", "/ws/a", "a", true},
		{"/ws", "/ws/..a", "..a", true}, // a name starting with two dots is inside
		{"/ws", "/ws/a/../b", "b", true},
		{"/ws", "/ws2", "", false},
		{"/ws", "/ws2/a", "", false},
		{"/ws", "/", "", false},
		{"/ws", "/ws/../etc", "", false},
		{"/ws", "ws/a", "", false}, // relative: not judged
		{"ws", "/ws/a", "", false}, // a relative root contains nothing
		{"", "/ws/a", "", false},
		{"/", "/etc/passwd", "etc/passwd", true},
	} {
		rel, ok := Within(tc.root, tc.p)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("Within(%q, %q) = %q, %v; want %q, %v", tc.root, tc.p, rel, ok, tc.rel, tc.ok)
		}
	}
}
