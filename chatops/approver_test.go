package chatops

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/pending"
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

// approveFunc is a round trip that answers with a function.
type approveFunc func(context.Context, pending.Request) pending.Ask

func (f approveFunc) Approve(ctx context.Context, req pending.Request) pending.Ask {
	return f(ctx, req)
}

// Every field of the agent's request reaches the store's request (a field
// added to one and forgotten in the adapter fails here), and the Ask's end
// comes back whole.
func TestAgentApproverCarriesEveryField(t *testing.T) {
	var req agent.Request
	rv := reflect.ValueOf(&req).Elem()
	for i := range rv.NumField() {
		if rv.Field(i).Kind() == reflect.Int { // Approvals
			rv.Field(i).SetInt(1) // one approval: no tally in the reason
			continue
		}
		rv.Field(i).SetString(fmt.Sprintf("value of %s", rv.Type().Field(i).Name))
	}
	deadline := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got pending.Request
	d := AgentApprover{Next: approveFunc(func(_ context.Context, r pending.Request) pending.Ask {
		got = r
		return pending.Ask{Request: r, ID: "ask-1", Status: pending.Status(pending.Denied), DecidedBy: "U1", DecisionReason: "no", Deadline: deadline}
	})}.Approve(t.Context(), req)

	gv := reflect.ValueOf(got)
	for i := range rv.NumField() {
		name := rv.Type().Field(i).Name
		f := gv.FieldByName(name)
		if !f.IsValid() {
			t.Errorf("pending.Request has no field %s", name)
			continue
		}
		if fmt.Sprint(f.Interface()) != fmt.Sprint(rv.Field(i).Interface()) {
			t.Errorf("%s: %v reached the store as %v", name, rv.Field(i).Interface(), f.Interface())
		}
	}
	want := agent.Decision{AskID: "ask-1", Outcome: agent.Denied, By: "U1", Reason: "no", Deadline: deadline}
	if d != want {
		t.Errorf("decision %+v, want %+v", d, want)
	}
}
