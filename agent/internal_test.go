package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/askops/askops/policy"
)

func TestCapWriter(t *testing.T) {
	cases := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"hello"}, "hello"},
		{"exactly the cap", 10, []string{"0123456789"}, "0123456789"},
		{"one over", 10, []string{"0123456789X"}, "01234\n[… 1 bytes cut …]\n6789X"},
		{"many small writes", 6, strings.Split("abcdefghijklmnopqrstuvwxyz", ""), "abc\n[… 20 bytes cut …]\nxyz"},
		{"tail grows past twice the cap", 4, []string{"ab", "cdefghijklmnop", "qrstuvwxyz"}, "ab\n[… 22 bytes cut …]\nyz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapWriter(tc.max)
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := c.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 12 ", 12 * time.Second, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT"), 90 * time.Second, true},
		{now.Add(-time.Hour).Format("Mon, 02 Jan 2006 15:04:05 GMT"), 0, true},
	}
	for _, tc := range cases {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		p    string
		want bool
	}{
		{"/ws", true},
		{"/ws/a", true},
		{"/ws/..a", true}, // a name starting with two dots is still inside
		{"/ws/a/../b", true},
		{"/ws2", false},
		{"/", false},
		{"/ws/../etc", false},
	}
	for _, tc := range cases {
		if _, got := policy.Within("/ws", tc.p); got != tc.want {
			t.Errorf("within(/ws, %q) = %v", tc.p, got)
		}
	}
}

func TestBackoffStaysWithinBounds(t *testing.T) {
	o := RetryOptions{BaseDelay: time.Second, MaxDelay: 5 * time.Second}.withDefaults()
	for attempt := 1; attempt <= 70; attempt++ {
		d := backoff(o, attempt)
		if d <= 0 || d > o.MaxDelay {
			t.Fatalf("attempt %d: backoff %v outside (0, %v]", attempt, d, o.MaxDelay)
		}
	}
}

// sharesMemory reports whether s's bytes lie inside outer's.
func sharesMemory(s, outer string) bool {
	if s == "" || outer == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(outer)))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(outer))
}

func TestStringArgumentsShareTheArgumentsText(t *testing.T) {
	params := []Param{{Name: "command", Type: String, Required: true}}
	raw := `{"command": "echo hello world"}`
	a, err := parseArgs("bash", params, raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.String("command"); got != "echo hello world" || !sharesMemory(got, raw) {
		t.Errorf("command = %q, shares the arguments' text: %v; want the same text, shared", got, sharesMemory(got, raw))
	}
	// Escaped text is decoded, not cut from the JSON.
	raw = `{"command": "printf 'a\tb\n' \"x\""}`
	if a, err = parseArgs("bash", params, raw); err != nil {
		t.Fatal(err)
	}
	if got, want := a.String("command"), "printf 'a\tb\n' \"x\""; got != want {
		t.Errorf("command = %q, want %q", got, want)
	}
	if got := a.String("absent"); got != "" {
		t.Errorf("an absent argument = %q, want empty", got)
	}
}

func TestRunsInOneDirectoryShareTheirSystemPrompt(t *testing.T) {
	r := &Runner{cfg: Config{SystemPrompt: "Be careful."}, prompts: map[string]string{}}
	a := r.systemPrompt(Env{Workspace: "/ws", Cwd: "/ws/api"})
	b := r.systemPrompt(Env{Workspace: "/ws", Cwd: "/ws/api"})
	c := r.systemPrompt(Env{Workspace: "/ws", Cwd: "/ws/web"})
	if want := "Be careful.\n\nWorkspace: /ws\nWorking directory: /ws/api"; a != want {
		t.Fatalf("prompt = %q, want %q", a, want)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("two runs in /ws/api hold two copies of the system prompt")
	}
	if !strings.HasSuffix(c, "Working directory: /ws/web") {
		t.Errorf("the prompt for /ws/web = %q", c)
	}
	for i := range 2 * maxKeptPrompts {
		r.systemPrompt(Env{Workspace: "/ws", Cwd: fmt.Sprintf("/ws/d%d", i)})
	}
	if len(r.prompts) > maxKeptPrompts {
		t.Errorf("%d prompts kept, want at most %d", len(r.prompts), maxKeptPrompts)
	}
}
