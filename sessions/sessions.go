// Package sessions keeps the chat-ops state of askops sessions that every
// process must see alike: which sessions a Slack channel started (so
// /askops grants lists their grants on any replica), the mode the channel's
// approvers set for those sessions (/askops mode), and requests to stop a
// run wherever it runs (/askops stop), and the runs in progress per user
// who started them (the App Home; runs.go); and of the agent sessions the
// gateway fronts, each one's workspace root, start and Slack thread, and
// the Slack events chat-ops has handled (agents.go).
//
// A session is one Slack thread (every run started in it) or one bot run
// invocation. Slash commands carry no thread, so modes are set per channel
// and apply to that channel's sessions. RedisStore shares the state between
// processes on one Redis; MemoryStore is the embedded default for one
// process. Both obey the same contract, tested against both.
package sessions

import (
	"cmp"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/askops/askops/policy"
)

// Options configure both stores. The zero value is usable.
type Options struct {
	// TTL is the session TTL (approvals.session_ttl): a channel's sessions
	// are listed, and its mode kept, until TTL passes without a run
	// starting there or the mode being set. Default 12h.
	TTL time.Duration

	// MaxSessions bounds the sessions kept per channel (the oldest go
	// first). Default 200.
	MaxSessions int

	// StopWait bounds how long Stop waits for the process running the run
	// to say it stopped it. Default 1.5s, inside Slack's 3 s reply window.
	StopWait time.Duration

	// Namespace prefixes every Redis key and channel. Default "askops".
	Namespace string

	// ListenerIdle is how long the Redis stop listener waits for a message
	// before pinging; two silent periods in a row replace the connection.
	// Default 15s.
	ListenerIdle time.Duration

	// RunLease is how long a recorded run stays listed without its
	// process renewing it (every RunLease/3). Default 30s.
	RunLease time.Duration
	// MaxRunsPerUser bounds the runs recorded per user; RecordRun refuses
	// more. Default 100.
	MaxRunsPerUser int

	Now    func() time.Time // default time.Now
	Logger *slog.Logger     // default: discard

	// serverNow stands in for the Redis server's clock (TIME) in tests
	// that drive time with a fake clock; nil (always, outside tests) means
	// the server's own TIME (the Home's viewers, homeviewers.go).
	serverNow func() time.Time
}

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = 12 * time.Hour
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 200
	}
	if o.StopWait <= 0 {
		o.StopWait = 1500 * time.Millisecond
	}
	if o.Namespace == "" {
		o.Namespace = "askops"
	}
	if o.ListenerIdle <= 0 {
		o.ListenerIdle = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o = o.runDefaults()
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// Stopper stops a run of this process: it reports whether runID was live
// here (and is now stopping). by is who asked, for the logs.
type Stopper func(runID, by string) bool

// StopResult is what became of a stop request.
type StopResult struct {
	Stopped bool      // a process running the run took the request and stopped it
	Local   bool      // that process is this one
	By      string    // who asked
	At      time.Time // when the run's process stopped it
}

// ModeSetting is a channel's mode and who set it when.
type ModeSetting struct {
	Mode policy.Mode
	By   string
	At   time.Time
}

// maxID bounds channel, session and run ids.
const maxID = 256

func checkID(op, what, id string) error {
	switch {
	case id == "":
		return invalid(op, "empty %s", what)
	case len(id) > maxID:
		return invalid(op, "%s longer than %d bytes", what, maxID)
	case strings.ContainsFunc(id, unicode.IsControl):
		return invalid(op, "%s contains control characters", what)
	}
	return nil
}

// checkMode accepts the modes chat-ops may set. Mode full is config-only:
// nobody in Slack can switch supervision off.
func checkMode(op string, m policy.Mode) error {
	if !m.SessionSettable() {
		return invalid(op, "mode %q (want ask or never; full is set in the config only)", m)
	}
	return nil
}

// checkTrack checks Track's arguments, the same for every store.
func checkTrack(channel, session string) error {
	if err := checkID("track", "channel", channel); err != nil {
		return err
	}
	return checkID("track", "session", session)
}

// checkSetMode checks SetMode's arguments, the same for every store.
func checkSetMode(channel string, mode policy.Mode) error {
	if err := checkID("set mode", "channel", channel); err != nil {
		return err
	}
	return checkMode("set mode", mode)
}

func msUTC(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
