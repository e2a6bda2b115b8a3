package grants

import (
	"fmt"
	"time"
)

// DurationText is a grant's life for people: "15 min", "1 h", "1 h 30
// min", "40 s". Slack's buttons, the console's and /askops grants all say
// it this way.
func DurationText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int64(d/time.Second))
	case d < time.Hour && d%time.Minute == 0:
		return fmt.Sprintf("%d min", int64(d/time.Minute))
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	case d%time.Hour < time.Minute:
		return fmt.Sprintf("%d h", int64(d/time.Hour))
	}
	return fmt.Sprintf("%d h %d min", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
}
