package approval

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/askops/askops/internal/storeerr"
	"github.com/askops/askops/pending"
)

// castFails is a store whose votes fail with err; reads work.
type castFails struct {
	pending.Store
	err error
}

func (c castFails) Cast(context.Context, string, pending.Ballot) (pending.Ask, error) {
	return pending.Ask{}, &storeerr.Error{Store: "pending", Code: pending.CodeUnavailable, Op: "cast", Msg: "store unreachable", Err: c.err}
}

// redisReply is an error Redis answered with (go-redis's errors have
// RedisError).
type redisReply string

func (e redisReply) Error() string { return string(e) }
func (redisReply) RedisError()     {}

// A vote the store failed on is Unsure unless the failure rules out that
// the store carried it out: a reply that never came (deadline, broken
// connection) may hide a recorded vote; a refused connection or Redis's
// own error answer does not.
func TestUnavailableVoteIsUnsureUnlessRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadline passed waiting for the answer", context.DeadlineExceeded, true},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, true},
		{"connection lost after sending", errors.New("EOF"), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}, false},
		{"Redis refused the write", redisReply("OOM command not allowed when used memory > 'maxmemory'"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := pending.NewMemoryStore(pending.Options{})
			defer mem.Close()
			a, err := mem.Create(t.Context(), pending.Request{RunID: "r", Tool: "bash", Summary: "make"}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDecider(DeciderConfig{Asks: castFails{mem, tc.err}})
			defer d.Close()
			res, _ := d.Decide(t.Context(), Vote{Ask: a.ID, Outcome: pending.Approved, Voter: Voter{By: "U_ANA", Person: "U_ANA"}})
			if res.Kind != Unavailable || res.Unsure != tc.want {
				t.Fatalf("Decide = %s, Unsure %v; want unavailable, Unsure %v", res.Kind, res.Unsure, tc.want)
			}
		})
	}
}

// A read that fails writes nothing: never Unsure.
func TestFailedReadIsNotUnsure(t *testing.T) {
	mem := pending.NewMemoryStore(pending.Options{})
	defer mem.Close()
	d := NewDecider(DeciderConfig{Asks: readFails{mem}})
	defer d.Close()
	res, _ := d.Decide(t.Context(), Vote{Ask: "a1", Outcome: pending.Approved, Voter: Voter{By: "U_ANA"}})
	if res.Kind != Unavailable || res.Unsure {
		t.Fatalf("Decide = %s, Unsure %v", res.Kind, res.Unsure)
	}
}

type readFails struct{ pending.Store }

func (readFails) Get(context.Context, string) (pending.Ask, error) {
	return pending.Ask{}, &storeerr.Error{Store: "pending", Code: pending.CodeUnavailable, Op: "get", Msg: "store unreachable", Err: context.DeadlineExceeded}
}
