package foragent

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// The agent's outcome words are the store's, one for one, with the same
// meaning for "the call runs".
func TestAgentOutcomesAreTheStoresOutcomes(t *testing.T) {
	ours, theirs := agent.Outcomes(), pending.Outcomes()
	if len(ours) != len(theirs) {
		t.Fatalf("agent has %d outcomes, pending %d", len(ours), len(theirs))
	}
	for i, o := range theirs {
		a := agent.Outcome(o)
		if a != ours[i] || !a.Valid() || a.Approves() != o.Approves() {
			t.Errorf("pending %q maps to agent %q (valid %v, approves %v; want %v)", o, a, a.Valid(), a.Approves(), o.Approves())
		}
	}
	if agent.Outcome(pending.StatusPending).Valid() {
		t.Error("a pending Ask reads as a decision to the agent")
	}
}

// approveFunc is a round trip that answers with a function, on a
// goroutine of its own.
type approveFunc func(context.Context, pending.Request) pending.Ask

func (f approveFunc) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return pending.Ask{Request: req}, func(ctx context.Context, done func(pending.Ask)) { go func() { done(f(ctx, req)) }() }
}

// approve is a's decision on req, once done has it.
func approve(t *testing.T, a Approver, req agent.Request) agent.Decision {
	t.Helper()
	decided := make(chan agent.Decision, 1)
	a.Approve(t.Context(), req, func(d agent.Decision) { decided <- d })
	return <-decided
}

// Every field of the agent's request reaches the store's request (a field
// added to one and forgotten in the adapter fails here), and the Ask's end
// comes back whole.
func TestApproverCarriesEveryField(t *testing.T) {
	var req agent.Request
	rv := reflect.ValueOf(&req).Elem()
	fill(rv, "")
	deadline := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got pending.Request
	d := approve(t, Approver{Next: approveFunc(func(_ context.Context, r pending.Request) pending.Ask {
		got = r
		return pending.Ask{Request: r, ID: "ask-1", Status: pending.Status(pending.Denied), DecidedBy: "U1", DecisionReason: "no", Deadline: deadline}
	})}, req)

	sameFields(t, rv, reflect.ValueOf(got), "")
	want := agent.Decision{AskID: "ask-1", Outcome: agent.Denied, By: "U1", Reason: "no", Deadline: deadline}
	if d != want {
		t.Errorf("decision %+v, want %+v", d, want)
	}
}

// fill sets every string field of v, in nested structs too, to a value
// that names it.
func fill(v reflect.Value, prefix string) {
	for i := range v.NumField() {
		name := prefix + v.Type().Field(i).Name
		if f := v.Field(i); f.Type() == reflect.TypeFor[time.Time]() {
			f.Set(reflect.ValueOf(time.Unix(1796220120, 0))) // SessionStarted
		} else if f.Kind() == reflect.Struct {
			fill(f, name+".")
		} else if f.Kind() == reflect.Int { // Approvals
			f.SetInt(1) // one approval: no tally in the reason
		} else if name == "Call.Kind" { // a command: what a reading is of
			f.SetString(string(agent.EffectCommand))
		} else if f.Type() == reflect.TypeFor[*policy.Reading]() {
			f.Set(reflect.ValueOf(&policy.Reading{Programs: []string{"judged-program"}}))
		} else {
			f.SetString("value of " + name)
		}
	}
}

// sameFields reports every field of want (a struct, nested structs field
// by field) that got lacks or holds another value in.
func sameFields(t *testing.T, want, got reflect.Value, prefix string) {
	t.Helper()
	for i := range want.NumField() {
		name := want.Type().Field(i).Name
		f := got.FieldByName(name)
		switch {
		case name == "Reading": // what the approver is shown of it: the Ask's Shown
			if s, ok := got.FieldByName("Shown").Interface().(*pending.Shown); !ok || s == nil || !slices.Equal(s.Programs, []string{"judged-program"}) {
				t.Errorf("the judged reading reached the store as Shown %+v", got.FieldByName("Shown").Interface())
			}
		case !f.IsValid():
			t.Errorf("pending.Request has no field %s%s", prefix, name)
		case want.Field(i).Kind() == reflect.Struct && want.Field(i).Type() != reflect.TypeFor[time.Time]():
			sameFields(t, want.Field(i), f, prefix+name+".")
		case fmt.Sprint(f.Interface()) != fmt.Sprint(want.Field(i).Interface()):
			t.Errorf("%s%s: %v reached the store as %v", prefix, name, want.Field(i).Interface(), f.Interface())
		}
	}
}

// The agent's effect words are the store's call kinds, one for one, so the
// adapter passes them as they are.
func TestAgentEffectsAreTheStoresCallKinds(t *testing.T) {
	pairs := map[agent.EffectKind]pending.CallKind{
		agent.EffectCommand: pending.CallCommand, agent.EffectWrite: pending.CallWrite, agent.EffectEdit: pending.CallEdit,
	}
	for a, p := range pairs {
		if string(a) != string(p) {
			t.Errorf("agent %q is pending %q", a, p)
		}
	}
}

// A bot run names its session by the id its terminal printed; a run in a
// Slack thread without a name by that thread.
func TestRunSessionNames(t *testing.T) {
	if got := runSessionName(agent.Request{RunID: "run_x"}); got != "bot run 'run_x'" {
		t.Errorf("a bot run's session: %q", got)
	}
	if got := runSessionName(agent.Request{RunID: "run_x", ReplyThreadTS: "1.2"}); got != "the Slack thread of run 'run_x'" {
		t.Errorf("a thread run's session: %q", got)
	}
	if got := runSessionName(agent.Request{RunID: "run_x", SessionName: "thread 'deploy'"}); got != "thread 'deploy'" {
		t.Errorf("a named session: %q", got)
	}
}

// thenFunc is a round trip that parks: it answers later, through done.
type thenFunc func(context.Context, pending.Request, func(pending.Ask))

func (f thenFunc) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return pending.Ask{Request: req}, func(ctx context.Context, done func(pending.Ask)) { f(ctx, req, done) }
}

// A run's Ask waits parked in the round trip: Approve returns before the
// decision, which then comes back whole through done.
func TestApproveWaitsParked(t *testing.T) {
	var req agent.Request
	rv := reflect.ValueOf(&req).Elem()
	fill(rv, "")
	var parked func(pending.Ask)
	var got pending.Request
	parking := thenFunc(func(_ context.Context, r pending.Request, done func(pending.Ask)) { got, parked = r, done })
	decided := make(chan agent.Decision, 1)
	Approver{Next: parking}.Approve(t.Context(), req, func(d agent.Decision) { decided <- d })
	if parked == nil {
		t.Fatal("the round trip was not asked")
	}
	sameFields(t, rv, reflect.ValueOf(got), "")
	parked(pending.Ask{Request: got, ID: "ask-1", Status: pending.Status(pending.Approved), DecidedBy: "U1"})
	if d, want := <-decided, (agent.Decision{AskID: "ask-1", Outcome: agent.Approved, By: "U1"}); d != want {
		t.Errorf("decision %+v, want %+v", d, want)
	}
}
