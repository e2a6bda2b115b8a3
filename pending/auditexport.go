package pending

import (
	"encoding/json"
	"io"
	"time"
)

// AskHistory is one Ask's story as the audit trail tells it: who asked
// for what and why the policy asked, every event in between (votes,
// reminders, escalations, refusals…), and how it ended. It is one line of
// `bot audit export`.
type AskHistory struct {
	AskID        string    `json:"ask_id"`
	RunID        string    `json:"run_id,omitempty"`
	Tool         string    `json:"tool,omitempty"`
	AskedBy      string    `json:"asked_by,omitempty"` // who started the run
	What         string    `json:"what,omitempty"`     // the call's summary (cut to 80 bytes)
	PolicyReason string    `json:"policy_reason,omitempty"`
	AskedAt      time.Time `json:"asked_at,omitzero"`

	Outcome        Outcome   `json:"outcome,omitempty"` // empty while pending (or its event was trimmed)
	DecidedBy      string    `json:"decided_by,omitempty"`
	DecidedAt      time.Time `json:"decided_at,omitzero"`
	DecisionReason string    `json:"decision_reason,omitempty"`

	// Events are all its retained events, oldest first, asked and decided
	// included, each with its place in the chain.
	Events []HistoryEvent `json:"events"`
}

// HistoryEvent is one event inside an AskHistory.
type HistoryEvent struct {
	Seq     int64     `json:"seq,omitempty"`
	Kind    EventKind `json:"kind"`
	At      time.Time `json:"at"`
	By      string    `json:"by,omitempty"`
	Outcome Outcome   `json:"outcome,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Detail  string    `json:"detail,omitempty"`
}

// Histories groups events (oldest first) by Ask, in the order each Ask
// first appears. Events with no Ask id form a history of their own.
func Histories(events []Event) []AskHistory {
	var out []AskHistory
	at := map[string]int{}
	for _, e := range events {
		i, ok := at[e.AskID]
		if !ok {
			i = len(out)
			at[e.AskID] = i
			out = append(out, AskHistory{AskID: e.AskID, RunID: e.RunID, Tool: e.Tool})
		}
		h := &out[i]
		switch e.Kind {
		case EventAsked:
			h.AskedBy, h.What, h.PolicyReason, h.AskedAt = e.By, e.Detail, e.Reason, e.At
		case EventDecided:
			h.Outcome, h.DecidedBy, h.DecidedAt, h.DecisionReason = e.Outcome, e.By, e.At, e.Reason
		}
		h.Events = append(h.Events, HistoryEvent{Seq: e.Seq, Kind: e.Kind, At: e.At, By: e.By, Outcome: e.Outcome, Reason: e.Reason, Detail: e.Detail})
	}
	return out
}

// WriteHistories writes one JSON object per line (JSON Lines).
func WriteHistories(w io.Writer, hs []AskHistory) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // commands are full of && and <
	for _, h := range hs {
		if err := enc.Encode(h); err != nil {
			return err
		}
	}
	return nil
}
