package grants

import (
	"testing"
	"time"
)

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute: "15 min", time.Hour: "1 h", 90 * time.Minute: "1 h 30 min",
		40 * time.Second: "40 s", 2*time.Minute + 5*time.Second: "2 min 5 s", 12 * time.Hour: "12 h",
	} {
		if got := DurationText(d); got != want {
			t.Errorf("DurationText(%s) = %q, want %q", d, got, want)
		}
	}
}
