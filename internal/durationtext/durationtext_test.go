package durationtext

import (
	"testing"
	"time"
)

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute: "15m", 90 * time.Minute: "1h30m", time.Hour: "1h", 2 * time.Second: "2s", 1500 * time.Millisecond: "2s",
		12 * time.Hour: "12h",
	} {
		if got := Short(d); got != want {
			t.Errorf("Short(%s) = %q, want %q", d, got, want)
		}
	}
}
