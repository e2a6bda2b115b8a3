package local

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/apitest"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// The local API's tokens outlive a serve (a copied token keeps working
// after a restart), live in a file only its owner reads, and change only
// when asked.
func TestLocalTokensStable(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"ASKOPS_LOCAL_ENDPOINT": filepath.Join(dir, "askops", "local.json")}[k]
	}
	first, err := LoadTokens(env, false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadTokens(env, false)
	if err != nil || again != first {
		t.Errorf("a second serve got %+v (%v), want the first's %+v", again, err, first)
	}
	if fi, err := os.Stat(filepath.Join(dir, "askops", "local-tokens.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens file: %v %v, want mode 0600", fi, err)
	}
	rotated, err := LoadTokens(env, true)
	if err != nil || rotated.Script == first.Script || rotated.Agent == first.Agent {
		t.Errorf("rotate kept a token: %+v (%v)", rotated, err)
	}
	if first.Script == first.Agent {
		t.Error("one token for both judgings")
	}
	// A tokens file others may read is not trusted: new tokens.
	p := filepath.Join(dir, "askops", "local-tokens.json")
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if fresh, err := LoadTokens(env, false); err != nil || fresh == rotated {
		t.Errorf("a world-readable tokens file was reused: %+v %v", fresh, err)
	}
}

// The local API judges by the token: an agent's hook (agent token) is
// judged as the gateway judges agents' tools, so a read inside its project
// runs at once; bot ask (script token) asks a human for what only the
// rules would allow. An unknown token is refused.
func TestLocalAPIJudgesByToken(t *testing.T) {
	url, tokens, cfg := newLocalAPI(t, "")
	project := t.TempDir()
	read := map[string]any{"session_id": "s1", "agent": "Claude Code", "tool": "Read",
		"input": map[string]any{"file_path": filepath.Join(project, "go.mod")}, "cwd": project}

	if r := post(t, url+"/v1/asks", tokens.Agent, read); r.Status != 200 || r.Body["status"] != "approved" {
		t.Errorf("a hook's read inside its project: %d %s, want approved by policy at once", r.Status, r.Raw)
	}
	if r := post(t, url+"/v1/asks", tokens.Script, read); r.Status != 201 || r.Body["status"] != "pending" {
		t.Errorf("bot ask's call: %d %s, want a pending Ask (a script asked for a human)", r.Status, r.Raw)
	}
	if r := post(t, url+"/v1/asks", recordid.Secret(), read); r.Status != 401 {
		t.Errorf("an unknown token: %d %s", r.Status, r.Raw)
	}
	cfg.Tokens = Tokens{Script: tokens.Script, Agent: tokens.Script}
	if _, err := New(cfg); err == nil {
		t.Error("one token for both judgings was accepted")
	}
}

// newLocalAPI serves a local Ask API in mode on memory stores; it returns
// its URL, its tokens and the Config it was built from.
func newLocalAPI(t *testing.T, mode policy.Mode) (string, Tokens, Config) {
	t.Helper()
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	core, err := approval.New(approval.Config{Asks: asks, Grants: gs, Notifiers: []approval.Notifier{nopNotifier{}}, Timeout: time.Minute, SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tokens := Tokens{Script: recordid.Secret(), Agent: recordid.Secret()}
	cfg := Config{Asks: asks, Approver: core, Grants: gs, Mode: mode, MaxTimeout: time.Minute, Tokens: tokens, Logger: slog.New(slog.DiscardHandler)}
	api, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	srv := httptest.NewServer(api.Handler)
	t.Cleanup(srv.Close)
	return srv.URL, tokens, cfg
}

// nopNotifier shows Asks nowhere, as the console's live view does for a
// test without a browser.
type nopNotifier struct{}

func (nopNotifier) PostThen(_ context.Context, _ *pending.Ask, done func(string, string, error)) {
	go done("", "", nil)
}
func (nopNotifier) Update(context.Context, pending.Ask) error { return nil }

type reply = apitest.Reply

func post(t *testing.T, url, token string, body any) reply {
	t.Helper()
	return apitest.Do(t, "POST", url, token, body)
}

// policy.mode holds for agents' hooks on the local API as on the serve
// with Slack: in mode full a hook's command the policy reads in full runs
// at once; in the default mode it waits for a person. bot ask always asks.
func TestLocalAPIJudgesHooksInThePolicyMode(t *testing.T) {
	project := t.TempDir()
	touch := map[string]any{"session_id": "s1", "agent": "Claude Code", "tool": "Bash",
		"input": map[string]any{"command": "touch notes.txt"}, "cwd": project}
	for _, tc := range []struct {
		mode  policy.Mode
		agent string // the hook's answer
	}{
		{"", "pending"},
		{policy.ModeAsk, "pending"},
		{policy.ModeFull, "approved"},
		{policy.ModeNever, "denied"},
	} {
		url, tokens, _ := newLocalAPI(t, tc.mode)
		if r := post(t, url+"/v1/asks", tokens.Agent, touch); r.Body["status"] != tc.agent {
			t.Errorf("mode %q: a hook's touch: %d %s, want %s", tc.mode, r.Status, r.Raw, tc.agent)
		}
		if r := post(t, url+"/v1/asks", tokens.Script, touch); r.Status != 201 || r.Body["status"] != "pending" {
			t.Errorf("mode %q: bot ask's touch: %d %s, want a pending Ask", tc.mode, r.Status, r.Raw)
		}
	}
}
