package agent_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/policy"
)

// TestSessionModeIsReadBeforeEachCall: a run consults its session's mode
// before every policy evaluation. never and ask apply at once; "" means the
// run's start mode; a failed read, full or an unknown value keep the last
// mode known, so no failure relaxes the run.
func TestSessionModeIsReadBeforeEachCall(t *testing.T) {
	type read struct {
		mode policy.Mode
		err  error
	}
	cases := []struct {
		name  string
		start policy.Mode
		reads []read
		want  []policy.Mode
	}{
		{
			name:  "changes apply to the next call",
			start: policy.ModeAsk,
			reads: []read{{"", nil}, {policy.ModeNever, nil}, {"", errors.New("redis down")}, {policy.ModeFull, nil}, {"yolo", nil}, {policy.ModeAsk, nil}, {"", nil}},
			want:  []policy.Mode{policy.ModeAsk, policy.ModeNever, policy.ModeNever, policy.ModeNever, policy.ModeNever, policy.ModeAsk, policy.ModeAsk},
		},
		{
			name:  "a failed first read keeps the start mode",
			start: policy.ModeNever,
			reads: []read{{"", errors.New("redis down")}, {policy.ModeFull, nil}, {"", nil}},
			want:  []policy.Mode{policy.ModeNever, policy.ModeNever, policy.ModeNever},
		},
		{
			name:  "a start in full goes to never, and back to the start mode when none is set",
			start: policy.ModeFull,
			reads: []read{{"", errors.New("redis down")}, {policy.ModeNever, nil}, {"", errors.New("redis down")}, {"", nil}},
			want:  []policy.Mode{policy.ModeFull, policy.ModeNever, policy.ModeNever, policy.ModeFull},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var replies []fakeopenai.Reply
			for i := range tc.reads {
				replies = append(replies, fakeopenai.Call(bash(fmt.Sprintf("c%d", i), "true")))
			}
			replies = append(replies, fakeopenai.Text("done"))
			h := newHarness(t, replies, nil)
			h.policy.decide = allowAll
			var mu sync.Mutex
			next := 0
			modeFor := func(ctx context.Context) (policy.Mode, error) {
				mu.Lock()
				defer mu.Unlock()
				r := tc.reads[next]
				next++
				return r.mode, r.err
			}
			res, _ := h.run(t, agent.RunSpec{SessionID: "C1/1.1", Mode: tc.start, ModeFor: modeFor})
			if res.Status != agent.StatusFinished {
				t.Fatalf("result = %+v", res)
			}
			var got []policy.Mode
			for _, c := range h.policy.judged() {
				got = append(got, c.Mode)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("modes judged = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSessionModeReadPanicKeepsTheMode: a panicking ModeFor is a failed
// read, not a crash.
func TestSessionModeReadPanicKeepsTheMode(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(bash("c1", "true")), fakeopenai.Text("done")}, nil)
	h.policy.decide = allowAll
	res, _ := h.run(t, agent.RunSpec{SessionID: "s", Mode: policy.ModeNever, ModeFor: func(context.Context) (policy.Mode, error) { panic("boom") }})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	if j := h.policy.judged(); len(j) != 1 || j[0].Mode != policy.ModeNever {
		t.Errorf("judged %+v, want mode never", j)
	}
}
