package sessions

import (
	"time"
	"unicode/utf8"
)

// Runs in progress, per the user who started them, so the App Home of any
// replica can list a user's runs. chat-ops' own run registry is per
// process; this record is what every replica sees alike.
//
// A process records a run when it starts and ends the record when the run
// ends. The Redis store holds each record under a lease the owning process
// renews every RunLease/3 (one write per run per renewal), so the runs of
// a process that died without ending them (kill -9) drop off the list once
// their lease lapses. The memory store has one process, which ends its
// own records.

// Run is a run in progress as the record keeps it.
type Run struct {
	ID        string    `json:"id"`
	StartedBy string    `json:"by"`
	Channel   string    `json:"channel,omitempty"`
	Label     string    `json:"label,omitempty"` // short; the caller redacts what it passes
	StartedAt time.Time `json:"at"`
}

// maxRunLabel bounds a recorded label (bytes); a longer one is cut.
const maxRunLabel = 200

func (r Run) check(op string) (Run, error) {
	if err := checkID(op, "run id", r.ID); err != nil {
		return Run{}, err
	}
	if err := checkID(op, "user", r.StartedBy); err != nil {
		return Run{}, err
	}
	if r.Channel != "" {
		if err := checkID(op, "channel", r.Channel); err != nil {
			return Run{}, err
		}
	}
	if len(r.Label) > maxRunLabel {
		cut := maxRunLabel
		for cut > 0 && !utf8.RuneStart(r.Label[cut]) {
			cut--
		}
		r.Label = r.Label[:cut] + "…"
	}
	r.StartedAt = msUTC(r.StartedAt)
	return r, nil
}

func (o Options) runDefaults() Options {
	if o.RunLease <= 0 {
		o.RunLease = 30 * time.Second
	}
	if o.MaxRunsPerUser <= 0 {
		o.MaxRunsPerUser = 100
	}
	return o
}
