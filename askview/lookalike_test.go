package askview

import (
	"strings"
	"testing"

	"github.com/askops/askops/pending"
)

// RFC 3492's decoding, on labels an attacker registers and on what is no
// punycode at all.
func TestDecodePunycode(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"80ak6aa92e", "аррӏе", true}, // reads as apple
		{"mnchen-3ya", "münchen", true},
		{"d1acufc", "домен", true},
		{"zzzz", "", false},
		{"-", "", false},
		{"", "", false},
		{"99999999999999999", "", false}, // overflows: no code point
	}
	for _, tc := range tests {
		got, ok := decodePunycode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("decodePunycode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// Call reads what each kind of call approves: a cwd unlike the Ask's, a
// path, what is written, an edit's new text, any other call's arguments.
func TestCallFindsEveryPart(t *testing.T) {
	tests := []struct {
		name  string
		call  pending.Call
		args  string
		where string
	}{
		{"command", pending.Call{Kind: pending.CallCommand, Command: "rm \u2212rf x"}, "", "line 1"},
		{"its cwd", pending.Call{Kind: pending.CallCommand, Command: "make", Cwd: "/srv\u2215app"}, "", "path"},
		{"write path", pending.Call{Kind: pending.CallWrite, Path: "a\u2024go", Content: "x"}, "", "path"},
		{"write content", pending.Call{Kind: pending.CallWrite, Path: "a.go", Content: "ok\nhttps://xn--80ak6aa92e.com"}, "", "line 2"},
		{"edit new", pending.Call{Kind: pending.CallEdit, Path: "a.go", Old: "a", New: "host\uff1a22"}, "", "line 1"},
		{"other", pending.Call{}, `{"url":"https://evil\u3002example"}`, "line 2"},
	}
	for _, tc := range tests {
		a := pending.Ask{Request: pending.Request{Tool: "t", Args: tc.args, Call: tc.call, Cwd: "/srv"}}
		found := Call(a)
		if len(found) != 1 || found[0].Where() != tc.where {
			t.Errorf("%s: found %+v, want one at %s", tc.name, found, tc.where)
		}
	}
	if found := Call(pending.Ask{Request: pending.Request{Call: pending.Call{Kind: pending.CallCommand, Command: "make", Cwd: "/srv\u2215app"}, Cwd: "/srv\u2215app"}}); len(found) != 0 {
		t.Errorf("the Ask's own cwd is shown apart, not as the call's: %+v", found)
	}
	if found := LookAlikes("echo fine https://example.com:443/a-b.c"); len(found) != 0 {
		t.Errorf("plain ASCII flagged: %+v", found)
	}
}

// A finding names the word it is in; in a call's JSON arguments a secret's
// value is a word of its own that no longer says it is one, so they are
// read redacted, as every surface shows them.
func TestCallArgumentsAreReadRedacted(t *testing.T) {
	a := pending.Ask{Request: pending.Request{Tool: "login", Args: `{"user":"ana","password":"huntеr2-s3cret"}`}}
	for _, f := range Call(a) {
		if strings.Contains(f.Word, "s3cret") {
			t.Errorf("a finding shows the password: %+v", f)
		}
	}
	a.Args = `{"url":"https://gіthub.com/o/r"}`
	if found := Call(a); len(found) != 1 || !strings.Contains(found[0].Word, "gіthub.com") {
		t.Errorf("the look-alike outside any secret is not named: %+v", found)
	}
}
