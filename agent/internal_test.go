package agent

import (
	"strings"
	"testing"
	"time"

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
