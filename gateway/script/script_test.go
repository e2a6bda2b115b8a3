package script

import (
	"bytes"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// bot ask skips the human only when the policy, in one evaluation with the
// grant store as its checker, says a grant covers the command: deny rules
// and dangers come first, and allow rules never stand in for a grant (nor
// mode full: GrantFor takes no mode, it fixes ask). Moved here from
// cmd/bot with GrantFor's caller's wiring.
func TestAskGrantIsThePolicysOneEvaluation(t *testing.T) {
	// A repository whose config names origin: a push grant reaches the
	// configured remotes only.
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/acme/app.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tests := []struct {
		name    string
		rules   []policy.Rule
		grant   string // a standing prefix grant, "" for none
		closed  bool   // the grant store is down
		command string
		want    bool
	}{
		{name: "standing grant covers", grant: "git push", command: "git push origin feature", want: true},
		{name: "no grant", command: "git push origin feature"},
		{name: "deny rule beats the grant", grant: "git push", command: "git push origin prod",
			rules: []policy.Rule{{Tool: "bash", Command: "git push origin prod", Decision: policy.Deny}}},
		{name: "danger beats the grant", grant: "git push", command: "git push --force origin main"},
		{name: "ask rule does not beat the grant", grant: "git push", command: "git push origin feature", want: true,
			rules: []policy.Rule{{Tool: "bash", Command: "git push", Decision: policy.Ask}}},
		{name: "allow rule is not a grant", command: "git push origin feature",
			rules: []policy.Rule{{Tool: "bash", Command: "git push", Decision: policy.Allow}}},
		{name: "store down: asking", grant: "git push", closed: true, command: "git push origin feature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := grants.NewMemoryStore(grants.Options{})
			t.Cleanup(func() { store.Close() })
			var want grants.Grant
			if tt.grant != "" {
				scope, err := grants.PrefixScope(tt.grant, ws)
				if err != nil {
					t.Fatal(err)
				}
				if want, err = store.RecordStanding(t.Context(), scope, "admin"); err != nil {
					t.Fatal(err)
				}
			}
			if tt.closed {
				store.Close()
			}
			req := Question{Command: tt.command, User: "tester", Cwd: ws}.Request()
			g, ok := GrantFor(t.Context(), tt.rules, store, req, tt.command, slog.New(slog.DiscardHandler))
			if ok != tt.want {
				t.Fatalf("grant used = %v, want %v", ok, tt.want)
			}
			if ok && (g.ID != want.ID || g.By != "admin" || !g.Standing()) {
				t.Errorf("grant %+v, want the standing one by admin", g)
			}
		})
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
	req := Question{Command: command, User: "tester", Cwd: "/srv/app"}.Request()
	rules := []policy.Rule{{Tool: "bash", Command: "mysql", Decision: policy.Deny}}
	if _, ok := GrantFor(t.Context(), rules, store, req, command, slog.New(slog.NewTextHandler(&logged, nil))); ok {
		t.Fatal("a grant was used")
	}
	if out := logged.String(); strings.Contains(out, pass) || !strings.Contains(out, "-p[REDACTED] app") {
		t.Errorf("log: %s", out)
	}
}
