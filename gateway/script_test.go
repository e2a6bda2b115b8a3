package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askops/askops/pending"
)

// The approver sees exactly what a shell would run.
func TestShellJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"terraform", "apply", "-auto-approve"}, "terraform apply -auto-approve"},
		{[]string{"rm", "-rf", "my dir"}, "rm -rf 'my dir'"},
		{[]string{"echo", "it's", ""}, `echo 'it'\''s' ''`},
		{[]string{"sh", "-c", "a; b"}, "sh -c 'a; b'"},
	} {
		if got := ShellJoin(tc.argv); got != tc.want {
			t.Errorf("ShellJoin(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

// bot ask's contract: 0 approved, 1 not approved, 2 unavailable; the line
// says who decided and why.
func TestScriptAnswer(t *testing.T) {
	for _, tc := range []struct {
		a    pending.Ask
		code int
		line string
	}{
		{pending.Ask{Status: pending.Status(pending.ApprovedSession), DecidedBy: "ana"}, ScriptApproved, "approved for session by ana"},
		{pending.Ask{Status: pending.Status(pending.Denied), DecidedBy: "bob", DecisionReason: "not now"}, ScriptNotApproved, "denied by bob: not now"},
		{pending.Ask{Status: pending.Status(pending.Expired)}, ScriptNotApproved, "expired"},
		{pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops"}, ScriptUnavailable, "unavailable by askops"},
		{pending.Ask{Status: pending.StatusPending}, ScriptUnavailable, "unavailable"},
	} {
		if got := ScriptExit(tc.a); got != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.a.Status, got, tc.code)
		}
		if got := ScriptLine(tc.a); got != tc.line {
			t.Errorf("%s: line %q, want %q", tc.a.Status, got, tc.line)
		}
	}
	var j map[string]any
	if err := json.Unmarshal(ScriptJSON(pending.Ask{Request: pending.Request{Summary: "ls"}, Status: pending.Status(pending.Approved)}, "https://t.slack.com/x"), &j); err != nil ||
		j["command"] != "ls" || j["status"] != "approved" || j["message_url"] != "https://t.slack.com/x" {
		t.Errorf("json %v, %v", j, err)
	}
}

// The endpoint file round-trips, only its owner may read it, and a missing
// one says to start a serve.
func TestLocalEndpointFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "askops", "local.json")
	env := func(k string) string { return map[string]string{"ASKOPS_LOCAL_ENDPOINT": p}[k] }
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "start `bot serve`") {
		t.Errorf("no file: %v", err)
	}
	if _, err := WriteLocalEndpoint(env, LocalEndpoint{URL: "http://127.0.0.1:1", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if e, err := ReadLocalEndpoint(env); err != nil || e.URL != "http://127.0.0.1:1" || e.Token != "t" {
		t.Errorf("read back %+v, %v", e, err)
	}
	if err := os.WriteFile(p, []byte(`{"url":""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "not readable as {url, token}") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := LocalEndpointPath(func(string) string { return "" }); err == nil {
		t.Error("a path without any of the variables")
	}
}
