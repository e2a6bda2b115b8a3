package gateway

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
)

// The local API's tokens outlive a serve (a copied token keeps working
// after a restart), live in a file only its owner reads, and change only
// when asked.
func TestLocalTokensStable(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"ASKOPS_LOCAL_ENDPOINT": filepath.Join(dir, "askops", "local.json")}[k]
	}
	first, err := LoadLocalTokens(env, false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadLocalTokens(env, false)
	if err != nil || again != first {
		t.Errorf("a second serve got %+v (%v), want the first's %+v", again, err, first)
	}
	if fi, err := os.Stat(filepath.Join(dir, "askops", "local-tokens.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens file: %v %v, want mode 0600", fi, err)
	}
	rotated, err := LoadLocalTokens(env, true)
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
	if fresh, err := LoadLocalTokens(env, false); err != nil || fresh == rotated {
		t.Errorf("a world-readable tokens file was reused: %+v %v", fresh, err)
	}
}

// The local API judges by the token: an agent's hook (agent token) is
// judged as the gateway judges agents' tools, so a read inside its project
// runs at once; bot ask (script token) asks a human for what only the
// rules would allow. An unknown token is refused.
func TestLocalAPIJudgesByToken(t *testing.T) {
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	core, err := approval.New(approval.Config{Asks: asks, Grants: gs, Notifiers: []approval.Notifier{nopNotifier{}}, Timeout: time.Minute, SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tokens := LocalTokens{Script: recordid.Secret(), Agent: recordid.Secret()}
	api, err := NewLocalAPI(LocalConfig{Asks: asks, Approver: core, Grants: gs, MaxTimeout: time.Minute, Tokens: tokens, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	srv := httptest.NewServer(api.Handler)
	t.Cleanup(srv.Close)
	project := t.TempDir()
	read := map[string]any{"session_id": "s1", "agent": "Claude Code", "tool": "Read",
		"input": map[string]any{"file_path": filepath.Join(project, "go.mod")}, "cwd": project}

	if r := call(t, "POST", srv.URL+"/v1/asks", tokens.Agent, read); r.status != 200 || r.body["status"] != "approved" {
		t.Errorf("a hook's read inside its project: %d %s, want approved by policy at once", r.status, r.raw)
	}
	if r := call(t, "POST", srv.URL+"/v1/asks", tokens.Script, read); r.status != 201 || r.body["status"] != "pending" {
		t.Errorf("bot ask's call: %d %s, want a pending Ask (a script asked for a human)", r.status, r.raw)
	}
	if r := call(t, "POST", srv.URL+"/v1/asks", recordid.Secret(), read); r.status != 401 {
		t.Errorf("an unknown token: %d %s", r.status, r.raw)
	}
	if _, err := NewLocalAPI(LocalConfig{Asks: asks, Approver: core, MaxTimeout: time.Minute, Tokens: LocalTokens{Script: tokens.Script, Agent: tokens.Script}}); err == nil {
		t.Error("one token for both judgings was accepted")
	}
}

// nopNotifier shows Asks nowhere, as the console's live view does for a
// test without a browser.
type nopNotifier struct{}

func (nopNotifier) PostThen(_ context.Context, _ *pending.Ask, done func(string, string, error)) {
	go done("", "", nil)
}
func (nopNotifier) Update(context.Context, pending.Ask) error { return nil }

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

// Two local serves on two ports each have their entry in the endpoint
// file: bot ask reaches the one started last; stopping either, in any
// order, leaves the other reachable; the file goes with the last; an
// entry whose serve was killed is skipped and dropped.
func TestLocalEndpointPerServe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "askops", "local.json")
	env := func(k string) string { return map[string]string{"ASKOPS_LOCAL_ENDPOINT": p}[k] }
	first := LocalEndpoint{URL: "http://127.0.0.1:1001", Token: "t1"}
	second := LocalEndpoint{URL: "http://127.0.0.1:1002", Token: "t2"}
	reads := func(want string) {
		t.Helper()
		e, err := ReadLocalEndpoint(env)
		switch {
		case want == "" && err == nil:
			t.Errorf("read %s, want no serve", e.URL)
		case want != "" && (err != nil || e.URL != want):
			t.Errorf("read %q (%v), want %s", e.URL, err, want)
		}
	}
	write := func(e LocalEndpoint) {
		t.Helper()
		if _, err := WriteLocalEndpoint(env, e); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(e LocalEndpoint) {
		t.Helper()
		if err := RemoveLocalEndpoint(env, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, order := range [][2]LocalEndpoint{{second, first}, {first, second}} {
		write(first)
		write(second)
		reads(second.URL)
		remove(order[0])
		reads(order[1].URL)
		remove(order[1])
		reads("")
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the file outlived its last serve: %v", err)
		}
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	killed := LocalEndpoint{URL: "http://127.0.0.1:1003", Token: "t3", PID: gone.Process.Pid}
	write(first)
	write(killed)
	reads(first.URL)
	remove(first)
	reads("")
	write(killed)
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "start `bot serve`") {
		t.Errorf("only a killed serve's entry: %v", err)
	}
}
