package main

import (
	"encoding/json"
	"github.com/askops/askops/gateway/script"
	"strings"
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// bot ask's contract: 0 approved, 1 not approved, 2 unavailable; the line
// says who decided and why.
func TestAskAnswer(t *testing.T) {
	for _, tc := range []struct {
		a    pending.Ask
		code int
		line string
	}{
		{pending.Ask{Status: pending.Status(pending.ApprovedSession), DecidedBy: "ana"}, 0, "approved for session by ana"},
		{pending.Ask{Status: pending.Status(pending.Denied), DecidedBy: "bob", DecisionReason: "not now"}, 1, "denied by bob: not now"},
		{pending.Ask{Status: pending.Status(pending.Expired)}, 1, "expired"},
		{pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops"}, 2, "unavailable by askops"},
		{pending.Ask{Status: pending.StatusPending}, 2, "unavailable"},
	} {
		if got := askExit(tc.a); got != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.a.Status, got, tc.code)
		}
		if got := askLine(tc.a); got != tc.line {
			t.Errorf("%s: line %q, want %q", tc.a.Status, got, tc.line)
		}
	}
	var j map[string]any
	if err := json.Unmarshal(askJSON(pending.Ask{Request: pending.Request{Summary: "ls"}, Status: pending.Status(pending.Approved)}, "https://t.slack.com/x"), &j); err != nil ||
		j["command"] != "ls" || j["status"] != "approved" || j["message_url"] != "https://t.slack.com/x" {
		t.Errorf("json %v, %v", j, err)
	}
}

// A question that could not be asked answers exit 2 either way: a line
// naming why, or an unavailable Ask decided by askops.
func TestWriteAskUnavailable(t *testing.T) {
	var text, js strings.Builder
	if code := writeAskUnavailable(t.Context(), &text, "no bot serve found", false); code != 2 || text.String() != "unavailable: no bot serve found\n" {
		t.Errorf("text: exit %d, %q", code, text.String())
	}
	if code := writeAskUnavailable(t.Context(), &js, "no bot serve found", true); code != 2 ||
		!strings.Contains(js.String(), `"status":"unavailable"`) || !strings.Contains(js.String(), `"decided_by":"askops"`) ||
		!strings.Contains(js.String(), `"reason":"no bot serve found"`) {
		t.Errorf("json: exit %d, %s", code, js.String())
	}
}

// A grant's answer names the grant and its owner, and a session grant the
// session as the asker named it, not the gateway's key for it.
func TestWriteAskGranted(t *testing.T) {
	req := script.Question{Command: "git push", User: "tester", Host: "box", Session: "deploy-1"}.Request()
	for _, tc := range []struct {
		g    grants.Grant
		line string
	}{
		{grants.Grant{ID: "gr_1", By: "ana"}, "approved by standing grant gr_1 (from ana)\n"},
		{grants.Grant{ID: "gr_2", By: "bob", SessionID: req.SessionID}, "approved by grant gr_2 (from bob, session deploy-1)\n"},
	} {
		var text, js strings.Builder
		if code := writeAskGranted(&text, req, tc.g, false); code != 0 || text.String() != tc.line {
			t.Errorf("text: exit %d, %q, want %q", code, text.String(), tc.line)
		}
		var j map[string]any
		if code := writeAskGranted(&js, req, tc.g, true); code != 0 || json.Unmarshal([]byte(js.String()), &j) != nil ||
			j["status"] != "approved" || j["decided_by"] != tc.g.By || j["command"] != "git push" {
			t.Errorf("json: exit %d, %s", code, js.String())
		}
	}
}
