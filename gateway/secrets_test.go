package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/policy"
)

// A policy's reason quotes the command ("denied by rule: … matches …"), so
// the secrets in the command must be gone from the reason wherever it
// goes: the API's answer when the policy decides, and, when a human must,
// the stored Ask, its audit trail, the API's answer and the Slack message.
func TestPolicyReasonKeepsNoSecret(t *testing.T) {
	const (
		mysqlPass = "S3cretPass99x"
		zipPass   = "Zip0Secret42y"
	)
	s := newStack(t, stackOptions{rules: []policy.Rule{
		{Tool: "bash", Command: "mysql", Decision: policy.Deny},
		{Tool: "bash", Command: "zip", Decision: policy.Ask},
	}})
	u := apiServer(t, s).URL

	denied := call(t, "POST", u+"/v1/asks", askToken, bashAsk("mysql -uroot -p"+mysqlPass+" app"))
	reason, _ := denied.body["reason"].(string)
	if denied.status != http.StatusOK || denied.body["status"] != "denied" || !strings.Contains(reason, "mysql -uroot -p[REDACTED] app") {
		t.Errorf("denied by the policy: %d %s", denied.status, denied.raw)
	}
	if strings.Contains(denied.raw, mysqlPass) {
		t.Errorf("the API's answer holds the password: %s", denied.raw)
	}

	asked := call(t, "POST", u+"/v1/asks", askToken, bashAsk("zip -r -P "+zipPass+" backup.zip reports/"))
	if asked.status != http.StatusCreated || !strings.Contains(asked.raw, "-P [REDACTED]") {
		t.Errorf("asked: %d %s", asked.status, asked.raw)
	}
	if strings.Contains(asked.raw, zipPass) {
		t.Errorf("the API's answer holds the password: %s", asked.raw)
	}
	a := s.posted(t, t.Context())
	got, err := s.asks.Get(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.asks.Audit(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var trail strings.Builder
	for _, e := range events {
		trail.WriteString(e.Reason + "\n" + e.Detail + "\n")
	}
	for where, text := range map[string]string{"reason": got.Reason, "arguments": got.Args, "summary": got.Summary, "audit": trail.String()} {
		if strings.Contains(text, zipPass) {
			t.Errorf("the stored %s holds the password: %q", where, text)
		}
	}
	if !strings.Contains(got.Reason, "-P [REDACTED]") {
		t.Errorf("stored reason %q", got.Reason)
	}
	if _, err := s.slack.WaitForCall(t.Context(), "chat.postMessage", func(c fakeslack.Call) bool {
		return c.OK() && strings.Contains(string(c.RawBlocks), "backup.zip")
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.slack.Calls("") {
		if strings.Contains(string(c.RawBlocks)+c.Text, zipPass) {
			t.Errorf("Slack %s holds the password: %s", c.Method, c.RawBlocks)
		}
	}
}

// bot ask logs the policy's reason when no grant covers the command; the
// reason quotes the command, and the log keeps no secret of it.
func TestBotAskLogKeepsNoSecret(t *testing.T) {
	const pass = "S3cretPass99x"
	store := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { store.Close() })
	var logged bytes.Buffer
	command := "mysql -uroot -p" + pass + " app"
	req := Script{Command: command, User: "tester", Cwd: "/srv/app"}.Request()
	rules := []policy.Rule{{Tool: "bash", Command: "mysql", Decision: policy.Deny}}
	if _, ok := GrantFor(t.Context(), rules, store, req, command, slog.New(slog.NewTextHandler(&logged, nil))); ok {
		t.Fatal("a grant was used")
	}
	if out := logged.String(); strings.Contains(out, pass) || !strings.Contains(out, "-p[REDACTED] app") {
		t.Errorf("log: %s", out)
	}
}
