package grants_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/policy"
)

func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

// testSealKey is the sealing key every Redis store of a test shares, as
// the processes of one deployment do.
var testSealKey = grants.SealKeyFrom("xoxb-test-token")

// newStoreFunc makes an empty store on clk. Each call starts from nothing.
type newStoreFunc func(t *testing.T, clk *testclock.Clock) grants.Store

// runContract is the one contract both stores obey.
func runContract(t *testing.T, newStore newStoreFunc) {
	t.Run("time-boxed", func(t *testing.T) { testBoxed(t, newStore) })
	npmTest := bashCall("npm test", "/ws/app")
	exactScope := func(t *testing.T) grants.Scope { return must(t)(grants.ScopeFor(npmTest)) }

	t.Run("record and match", func(t *testing.T) {
		ctx := t.Context()
		clk := newClock()
		st := newStore(t, clk)
		g, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.ID) < 22 || strings.ContainsAny(g.ID, "+/=") {
			t.Errorf("grant id %q is not 128-bit URL-safe", g.ID)
		}
		if g.SessionID != "s1" || g.By != "U1" || g.Standing() || !g.CreatedAt.Equal(clk.Now()) || !g.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
			t.Errorf("recorded grant = %+v", g)
		}
		got, ok, err := st.Match(ctx, "s1", npmTest)
		if err != nil || !ok || got.ID != g.ID {
			t.Fatalf("Match = %+v, %v, %v; want grant %s", got, ok, err, g.ID)
		}
		desc, ok, err := st.GrantFor(ctx, "s1", npmTest)
		if want := fmt.Sprintf(`grant %s (bash: exactly "npm test" in /ws/app) by U1`, g.ID); err != nil || !ok || desc != want {
			t.Errorf("GrantFor = %q, %v, %v; want %q", desc, ok, err, want)
		}
		for name, c := range map[string]policy.Call{
			"other cwd":     bashCall("npm test", "/ws"),
			"other command": bashCall("npm test; rm -rf /", "/ws/app"),
		} {
			if _, ok, err := st.Match(ctx, "s1", c); ok || err != nil {
				t.Errorf("%s: matched=%v err=%v", name, ok, err)
			}
		}
		for _, other := range []string{"s2", ""} {
			if _, ok, err := st.Match(ctx, other, npmTest); ok || err != nil {
				t.Errorf("session %q sees s1's grant: matched=%v err=%v", other, ok, err)
			}
			if desc, ok, err := st.GrantFor(ctx, other, npmTest); ok || err != nil || desc != "" {
				t.Errorf("GrantFor in session %q = %q, %v, %v", other, desc, ok, err)
			}
		}
		list, err := st.List(ctx, "s1")
		if err != nil || len(list) != 1 || list[0] != g {
			t.Errorf("List = %+v, %v; want [%+v]", list, err, g)
		}
	})

	t.Run("match returns the oldest covering grant", func(t *testing.T) {
		ctx := t.Context()
		clk := newClock()
		st := newStore(t, clk)
		call := bashCall("go list ./...", "/ws")
		older, err := st.Record(ctx, "s1", must(t)(grants.PrefixScope("go list", "/ws")), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		if _, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(call)), "U2", time.Hour); err != nil {
			t.Fatal(err)
		}
		for range 5 { // map order must not matter
			if g, ok, err := st.Match(ctx, "s1", call); err != nil || !ok || g.ID != older.ID || !g.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
				t.Fatalf("Match = %+v, %v, %v; want the older grant %s with the session's expiry", g, ok, err, older.ID)
			}
		}
	})

	t.Run("bad input writes nothing", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		good := exactScope(t)
		tests := []struct {
			name    string
			session string
			scope   grants.Scope
			by      string
			ttl     time.Duration
		}{
			{"empty session", "", good, "U1", time.Hour},
			{"control char session", "s\n1", good, "U1", time.Hour},
			{"huge session", strings.Repeat("s", 300), good, "U1", time.Hour},
			{"zero ttl", "s1", good, "U1", 0},
			{"negative ttl", "s1", good, "U1", -time.Second},
			{"empty grantor", "s1", good, " ", time.Hour},
			{"invalid scope", "s1", grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: "bash -c", Cwd: "/ws"}, "U1", time.Hour},
			{"zero scope", "s1", grants.Scope{}, "U1", time.Hour},
		}
		for _, tt := range tests {
			if _, err := st.Record(ctx, tt.session, tt.scope, tt.by, tt.ttl); grants.ErrorCode(err) != grants.CodeInvalid {
				t.Errorf("%s: Record err = %v, want invalid", tt.name, err)
			}
		}
		if _, err := st.RecordStanding(ctx, grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: "sudo", Cwd: "/ws"}, "admin"); grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("RecordStanding(sudo) err = %v, want invalid", err)
		}
		if _, err := st.RecordStanding(ctx, good, ""); grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("RecordStanding without grantor err = %v, want invalid", err)
		}
		for _, s := range []string{"s1", ""} {
			if list, err := st.List(ctx, s); err != nil || len(list) != 0 {
				t.Errorf("List(%q) after refused records = %+v, %v", s, list, err)
			}
		}
		if err := st.RevokeSession(ctx, ""); grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("RevokeSession(\"\") err = %v, want invalid (it must not touch standing grants)", err)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		g1, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := st.Record(ctx, "s1", must(t)(grants.PrefixScope("git status", "/ws")), "U2", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Revoke(ctx, "s2", g1.ID); grants.ErrorCode(err) != grants.CodeNotFound {
			t.Errorf("revoke through another session: %v, want not_found", err)
		}
		if err := st.Revoke(ctx, "", g1.ID); grants.ErrorCode(err) != grants.CodeNotFound {
			t.Errorf("revoke a session grant as standing: %v, want not_found", err)
		}
		if err := st.Revoke(ctx, "s1", g1.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.Match(ctx, "s1", npmTest); ok || err != nil {
			t.Errorf("revoked grant still matches: %v %v", ok, err)
		}
		if _, ok, _ := st.Match(ctx, "s1", bashCall("git status -s", "/ws")); !ok {
			t.Error("revoking one grant removed another")
		}
		if err := st.Revoke(ctx, "s1", g1.ID); grants.ErrorCode(err) != grants.CodeNotFound {
			t.Errorf("second revoke: %v, want not_found", err)
		}
		for _, id := range []string{"nope", "!expires", strings.Repeat("A", 22)} {
			if err := st.Revoke(ctx, "s1", id); grants.ErrorCode(err) != grants.CodeNotFound {
				t.Errorf("revoke %q: %v, want not_found", id, err)
			}
		}
		if err := st.Revoke(ctx, "s1", ""); grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("revoke empty id: %v, want invalid", err)
		}
		list, err := st.List(ctx, "s1")
		if err != nil || len(list) != 1 || list[0].ID != g2.ID {
			t.Errorf("List after revokes = %+v, %v; want only %s", list, err, g2.ID)
		}
	})

	t.Run("revoke session", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		for _, s := range []string{"s1", "s1", "s2"} {
			if _, err := st.Record(ctx, s, exactScope(t), "U1", time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		standing, err := st.RecordStanding(ctx, must(t)(grants.PrefixScope("go list", "/ws")), "admin")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RevokeSession(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if list, err := st.List(ctx, "s1"); err != nil || len(list) != 0 {
			t.Errorf("s1 after RevokeSession = %+v, %v", list, err)
		}
		if _, ok, _ := st.Match(ctx, "s1", npmTest); ok {
			t.Error("s1 grant matches after RevokeSession")
		}
		if list, _ := st.List(ctx, "s2"); len(list) != 1 {
			t.Errorf("RevokeSession(s1) touched s2: %+v", list)
		}
		if g, ok, _ := st.Match(ctx, "s1", bashCall("go list ./...", "/ws")); !ok || g.ID != standing.ID {
			t.Error("RevokeSession removed a standing grant")
		}
		if err := st.RevokeSession(ctx, "never-seen"); err != nil {
			t.Errorf("RevokeSession of an unknown session: %v", err)
		}
	})

	t.Run("session ttl with injected clock", func(t *testing.T) {
		ctx := t.Context()
		clk := newClock()
		st := newStore(t, clk)
		start := clk.Now()
		g1, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(30 * time.Minute)
		// A second record refreshes the whole session, as the Redis key TTL does.
		g2, err := st.Record(ctx, "s1", must(t)(grants.PrefixScope("git status", "/ws")), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(45 * time.Minute) // 1h15m after g1: alive through the refresh
		if _, ok, err := st.Match(ctx, "s1", npmTest); !ok || err != nil {
			t.Fatalf("g1 died before the refreshed session TTL: %v %v", ok, err)
		}
		list, err := st.List(ctx, "s1")
		if err != nil || len(list) != 2 || list[0].ID != g1.ID || list[1].ID != g2.ID {
			t.Fatalf("List = %+v, %v", list, err)
		}
		for _, g := range list {
			if want := start.Add(90 * time.Minute); !g.ExpiresAt.Equal(want) {
				t.Errorf("grant %s expires %v, want the session's %v", g.ID, g.ExpiresAt, want)
			}
		}
		if err := st.(interface {
			Touch(context.Context, string, time.Duration) error
		}).Touch(ctx, "s1", time.Hour); err != nil {
			t.Fatal(err)
		}
		clk.Advance(59 * time.Minute) // touched at 1h15m for 1h: alive at 2h14m
		if _, ok, _ := st.Match(ctx, "s1", npmTest); !ok {
			t.Fatal("Touch did not extend the session")
		}
		clk.Advance(time.Minute) // exactly at the deadline: dead
		if _, ok, err := st.Match(ctx, "s1", npmTest); ok || err != nil {
			t.Fatalf("expired grant matched: %v %v", ok, err)
		}
		if list, err := st.List(ctx, "s1"); err != nil || len(list) != 0 {
			t.Errorf("List after expiry = %+v, %v", list, err)
		}
		if err := st.Revoke(ctx, "s1", g1.ID); grants.ErrorCode(err) != grants.CodeNotFound {
			t.Errorf("revoke expired grant: %v, want not_found", err)
		}
		// A new record after expiry starts a new session; the old grants stay dead.
		g3, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(bashCall("make", "/ws"))), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if list, err := st.List(ctx, "s1"); err != nil || len(list) != 1 || list[0].ID != g3.ID {
			t.Errorf("expired grants revived by a new record: %+v, %v", list, err)
		}
		if _, ok, _ := st.Match(ctx, "s1", npmTest); ok {
			t.Error("expired grant revived by a new record")
		}
		// Touch of a dead session does not revive it.
		clk.Advance(2 * time.Hour)
		if err := st.(interface {
			Touch(context.Context, string, time.Duration) error
		}).Touch(ctx, "s1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if list, _ := st.List(ctx, "s1"); len(list) != 0 {
			t.Errorf("Touch revived an expired session: %+v", list)
		}
	})

	t.Run("standing grants", func(t *testing.T) {
		ctx := t.Context()
		clk := newClock()
		st := newStore(t, clk)
		sg, err := st.RecordStanding(ctx, must(t)(grants.DirScope("read_file", "docs", ws)), "admin")
		if err != nil {
			t.Fatal(err)
		}
		if !sg.Standing() || !sg.ExpiresAt.IsZero() {
			t.Errorf("standing grant = %+v", sg)
		}
		clk.Advance(24 * 365 * time.Hour) // no TTL
		read := fileCall("read_file", "docs/a.md", "")
		for _, s := range []string{"", "any-session"} {
			if g, ok, err := st.Match(ctx, s, read); err != nil || !ok || g.ID != sg.ID {
				t.Errorf("session %q: standing grant not matched: %+v %v %v", s, g, ok, err)
			}
		}
		if _, ok, _ := st.Match(ctx, "x", fileCall("write_file", "docs/a.md", "")); ok {
			t.Error("read_file standing grant covers write_file")
		}
		// The session's own grant is found first.
		own, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(read)), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if g, ok, _ := st.Match(ctx, "s1", read); !ok || g.ID != own.ID {
			t.Errorf("Match = %+v, want the session grant %s first", g, own.ID)
		}
		list, err := st.List(ctx, "")
		if err != nil || len(list) != 1 || list[0] != sg {
			t.Errorf("List(standing) = %+v, %v", list, err)
		}
		if err := st.Revoke(ctx, "s1", sg.ID); grants.ErrorCode(err) != grants.CodeNotFound {
			t.Errorf("revoke a standing grant through a session: %v, want not_found", err)
		}
		if err := st.Revoke(ctx, "", sg.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := st.Match(ctx, "", read); ok {
			t.Error("revoked standing grant matches")
		}
	})

	// A call without a session (bot ask without -session, an external agent
	// that sends none) sees standing grants and nobody's session grants,
	// through GrantFor as the policy engine asks.
	t.Run("no session sees standing grants only", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		build := bashCall("make build", "/ws/app")
		if _, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if desc, ok, err := st.GrantFor(ctx, "", npmTest); ok || err != nil || desc != "" {
			t.Errorf("GrantFor without a session matched a session grant: %q, %v, %v", desc, ok, err)
		}
		sg, err := st.RecordStanding(ctx, must(t)(grants.ScopeFor(build)), "admin")
		if err != nil {
			t.Fatal(err)
		}
		desc, ok, err := st.GrantFor(ctx, "", build)
		if err != nil || !ok || !strings.Contains(desc, sg.ID) {
			t.Fatalf("GrantFor without a session = %q, %v, %v; want standing grant %s", desc, ok, err, sg.ID)
		}
		engine, err := policy.New(policy.Config{Grants: st})
		if err != nil {
			t.Fatal(err)
		}
		if v := engine.Evaluate(ctx, build); v.Decision != policy.Allow || !strings.Contains(v.Grant, sg.ID) {
			t.Errorf("policy without a session: %s (%s), want allowed by standing grant %s", v.Decision, v.Reason, sg.ID)
		}
		if v := engine.Evaluate(ctx, npmTest); v.Decision != policy.Ask {
			t.Errorf("policy without a session on s1's grant: %s (%s), want ask", v.Decision, v.Reason)
		}
	})

	t.Run("concurrent records", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(bashCall(fmt.Sprintf("echo %d", i), "/ws"))), "U1", time.Hour)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		list, err := st.List(ctx, "s1")
		if err != nil || len(list) != n {
			t.Fatalf("List has %d grants (%v), want %d", len(list), err, n)
		}
		for i := range n {
			if _, ok, _ := st.Match(ctx, "s1", bashCall(fmt.Sprintf("echo %d", i), "/ws")); !ok {
				t.Errorf("echo %d not matched", i)
			}
		}
	})

	t.Run("a command holding a secret is sealed", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
		call := bashCall("curl -H 'Authorization: token "+secret+"' https://api.github.com/user", "/ws/app")
		g, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(call)), "U1", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		list, err := st.List(ctx, "s1")
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %v, %v", list, err)
		}
		for _, shown := range []string{g.String(), list[0].String(), list[0].Scope.Command} {
			if strings.Contains(shown, secret) || !strings.Contains(shown, "[REDACTED]") {
				t.Errorf("the grant shows %q, want the secret redacted", shown)
			}
		}
		if _, ok, err := st.Match(ctx, "s1", call); err != nil || !ok {
			t.Errorf("the identical call: matched %v (%v), want the sealed grant", ok, err)
		}
		other := bashCall(strings.Replace(call.Command, secret, secret[:len(secret)-1]+"6", 1), "/ws/app")
		if _, ok, err := st.Match(ctx, "s1", other); err != nil || ok {
			t.Errorf("the same call with another token: matched %v (%v), want no grant", ok, err)
		}
		if _, err := st.RecordStanding(ctx, must(t)(grants.PrefixScope("gh pr view ghp_0123456789abcdefghijABCDEFGHIJ012345", "/ws/app")), "U1"); grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("a prefix holding a secret: %v, want it refused as invalid", err)
		}
	})

	t.Run("closed store fails closed", func(t *testing.T) {
		ctx := t.Context()
		st := newStore(t, newClock())
		if _, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.Match(ctx, "s1", npmTest); ok || grants.ErrorCode(err) != grants.CodeUnavailable {
			t.Errorf("Match on a closed store = %v, %v; want unavailable", ok, err)
		}
		if desc, ok, err := st.GrantFor(ctx, "s1", npmTest); ok || desc != "" || grants.ErrorCode(err) != grants.CodeUnavailable {
			t.Errorf("GrantFor on a closed store = %q, %v, %v", desc, ok, err)
		}
		if _, err := st.Record(ctx, "s1", exactScope(t), "U1", time.Hour); grants.ErrorCode(err) != grants.CodeUnavailable {
			t.Errorf("Record on a closed store: %v", err)
		}
	})
}

func TestMemoryStore(t *testing.T) {
	runContract(t, func(t *testing.T, clk *testclock.Clock) grants.Store {
		st := grants.NewMemoryStore(grants.Options{Now: clk.Now})
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}
