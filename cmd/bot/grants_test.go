package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/policy"
)

// grantsWorkspace is a real (symlink-free) workspace with app/ and docs/.
func grantsWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"app", "docs"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// grantsConfig is the least a grants admin needs: no Slack secrets, no
// model, Redis from REDIS_URL.
func grantsConfig(t *testing.T, ws string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`
slack:
  approval_channel: CAPPROVALS
approvals:
  approvers:
    users: [%s]
agent:
  workspace: %q
`, approverID, ws))
}

// grantStore opens the grant store at redisURL, where a test records grants
// or checks a command's effects on them.
func grantStore(t *testing.T, redisURL string) grants.Store {
	t.Helper()
	client, err := redisconn.Open(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return grants.NewRedisStore(client, grants.Options{})
}

// grantsAdminSetup is the setting of a grants admin test on the Redis at
// redisURL: a grantsWorkspace, its grantsConfig, the admin's env (USER
// tester) and the grant store the command writes to.
func grantsAdminSetup(t *testing.T, redisURL string) (ws, cfg string, env map[string]string, store grants.Store) {
	t.Helper()
	ws = grantsWorkspace(t)
	return ws, grantsConfig(t, ws), map[string]string{"REDIS_URL": redisURL, "USER": "tester"}, grantStore(t, redisURL)
}

// grantLine is one line of `grants list`/`grants add`, split at tabs.
func grantLine(t *testing.T, stdout, id string) []string {
	t.Helper()
	for line := range strings.Lines(stdout) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 5 {
			t.Fatalf("line %q has %d fields, want 5 (id, scope, by, created, expires)", line, len(f))
		}
		if id == "" || f[0] == id {
			return f
		}
	}
	return nil
}

// TestGrantsAddListRevoke: for each scope kind, add records a standing
// grant covering what it says and nothing next to it, list shows it, revoke
// removes it, and a second revoke is "not found".
func TestGrantsAddListRevoke(t *testing.T) {
	rds := redistest.Start(t)
	ws, cfg, env, store := grantsAdminSetup(t, rds.URL())
	bash := func(cmd, cwd string) policy.Call {
		return policy.Call{Tool: "bash", Command: cmd, Cwd: cwd, Workspace: ws}
	}
	file := func(tool, path string) policy.Call {
		return policy.Call{Tool: tool, Path: path, Workspace: ws}
	}
	tests := []struct {
		name      string
		args      []string // after "grants"
		wantScope string
		wantBy    string
		covers    policy.Call
		notCovers []policy.Call
	}{
		{name: "exact command, -config before the verb",
			args:      []string{"-config", cfg, "add", "-tool", "bash", "-command", "npm test", "-cwd", "app"},
			wantScope: `bash: exactly "npm test" in ` + ws + "/app", wantBy: "admin:tester",
			covers:    bash("npm test", filepath.Join(ws, "app")),
			notCovers: []policy.Call{bash("npm test --watch", filepath.Join(ws, "app")), bash("npm test", ws)}},
		{name: "prefix, flags after the verb with two dashes",
			args:      []string{"add", "--tool", "bash", "--prefix", "git status", "--cwd", ".", "--config", cfg, "--by", "ana"},
			wantScope: `bash: commands starting with "git status" in ` + ws + ` (known options only; files in the workspace, not .git)`, wantBy: "admin:ana",
			covers:    bash("git status -s", ws),
			notCovers: []policy.Call{bash("git push", ws), bash("git status; rm -rf x", ws), bash("git status -s", filepath.Join(ws, "app"))}},
		{name: "absolute cwd inside the workspace",
			args:      []string{"add", "-config", cfg, "-tool", "bash", "-command", "make", "-cwd", filepath.Join(ws, "app"), "-by", "admin:bob"},
			wantScope: `bash: exactly "make" in ` + ws + "/app", wantBy: "admin:bob",
			covers:    bash("make", filepath.Join(ws, "app")),
			notCovers: []policy.Call{bash("make install", filepath.Join(ws, "app"))}},
		{name: "path",
			args:      []string{"-config", cfg, "add", "-tool", "write_file", "-path", "docs/a.md"},
			wantScope: "write_file: docs/a.md", wantBy: "admin:tester",
			covers:    file("write_file", "docs/a.md"),
			notCovers: []policy.Call{file("write_file", "docs/b.md"), file("edit_file", "docs/a.md")}},
		{name: "dir",
			args:      []string{"-config", cfg, "add", "-tool", "read_file", "-dir", "docs"},
			wantScope: "read_file: anything under docs/", wantBy: "admin:tester",
			covers:    file("read_file", "docs/x/y.md"),
			notCovers: []policy.Call{file("read_file", "app/main.go"), file("write_file", "docs/x.md")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			code, stdout, stderr := runBot(ctx, t, env, append([]string{"grants"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("add: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			f := grantLine(t, stdout, "")
			if f == nil {
				t.Fatalf("add printed no grant: %q", stdout)
			}
			id := f[0]
			if f[1] != tt.wantScope || f[2] != tt.wantBy || f[4] != "never" {
				t.Errorf("add printed %q, want scope %q by %q expiring never", f, tt.wantScope, tt.wantBy)
			}
			if created, err := time.Parse(time.RFC3339, f[3]); err != nil || time.Since(created) > time.Minute {
				t.Errorf("created %q: %v", f[3], err)
			}

			g, ok, err := store.Match(ctx, "", tt.covers)
			if err != nil || !ok || g.ID != id || !g.Standing() {
				t.Errorf("the grant does not cover %+v: %v %v %+v", tt.covers, ok, err, g)
			}
			for _, c := range tt.notCovers {
				// Other subtests' grants are gone (revoked), so any match is this one's.
				if g, ok, _ := store.Match(ctx, "", c); ok {
					t.Errorf("%+v is covered by %v", c, g)
				}
			}

			code, stdout, stderr = runBot(ctx, t, env, "grants", "list", "-config", cfg)
			if code != exitOK || grantLine(t, stdout, id) == nil {
				t.Fatalf("list: exit %d, %s not in\n%s\nstderr: %s", code, id, stdout, stderr)
			}
			code, stdout, stderr = runBot(ctx, t, env, "grants", "list", "-config", cfg, "-o", "json")
			var listed []grants.Grant
			if err := json.Unmarshal([]byte(stdout), &listed); code != exitOK || err != nil || len(listed) != 1 ||
				listed[0].ID != id || listed[0].Scope.String() != tt.wantScope || listed[0].By != tt.wantBy {
				t.Fatalf("list -o json: exit %d (%v)\n%s\nstderr: %s", code, err, stdout, stderr)
			}
			code, stdout, stderr = runBot(ctx, t, env, "grants", "-config", cfg, "revoke", id)
			if code != exitOK || !strings.Contains(stdout, "revoked standing grant "+id) {
				t.Fatalf("revoke: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if _, ok, _ := store.Match(ctx, "", tt.covers); ok {
				t.Error("a revoked grant still matches")
			}
			code, stdout, stderr = runBot(ctx, t, env, "grants", "list", "-config", cfg)
			if code != exitOK || stdout != "" || !strings.Contains(stderr, "no standing grants") {
				t.Errorf("list after revoke: exit %d stdout %q stderr %q", code, stdout, stderr)
			}
			if code, stdout, _ = runBot(ctx, t, env, "grants", "list", "-config", cfg, "-o", "json"); code != exitOK || strings.TrimSpace(stdout) != "[]" {
				t.Errorf("list -o json after revoke: exit %d stdout %q, want []", code, stdout)
			}
			code, _, stderr = runBot(ctx, t, env, "grants", "revoke", id, "-config", cfg)
			if code != exitFailed || !strings.Contains(stderr, "no standing grant") {
				t.Errorf("second revoke: exit %d stderr %q, want 1 and not found", code, stderr)
			}
		})
	}
}

// TestGrantsSession: an admin lists and revokes a session's grants too
// (they are made only by "Approve for session" clicks).
func TestGrantsSession(t *testing.T) {
	ctx := t.Context()
	rds := redistest.Start(t)
	ws, cfg, env, store := grantsAdminSetup(t, rds.URL())
	scope, err := grants.PathScope("edit_file", "docs/a.md", ws)
	if err != nil {
		t.Fatal(err)
	}
	g, err := store.Record(ctx, "deploy-42", scope, approverID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runBot(ctx, t, env, "grants", "-config", cfg, "list", "-session", "deploy-42")
	f := grantLine(t, stdout, g.ID)
	if code != exitOK || f == nil {
		t.Fatalf("list -session: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if f[1] != "edit_file: docs/a.md" || f[2] != approverID || f[4] != g.ExpiresAt.UTC().Format(time.RFC3339) {
		t.Errorf("list -session printed %q", f)
	}
	// The standing list does not show it, and a standing revoke does not find it.
	if code, stdout, _ := runBot(ctx, t, env, "grants", "-config", cfg, "list"); code != exitOK || stdout != "" {
		t.Errorf("standing list: exit %d stdout %q", code, stdout)
	}
	if code, _, _ := runBot(ctx, t, env, "grants", "-config", cfg, "revoke", g.ID); code != exitFailed {
		t.Errorf("revoking a session grant as standing: exit %d, want 1", code)
	}
	code, stdout, stderr = runBot(ctx, t, env, "grants", "-config", cfg, "revoke", "-session", "deploy-42", g.ID)
	if code != exitOK || !strings.Contains(stdout, "revoked grant "+g.ID+" in session deploy-42") {
		t.Fatalf("revoke -session: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	if list, err := store.List(ctx, "deploy-42"); err != nil || len(list) != 0 {
		t.Errorf("after revoke: %v %v", list, err)
	}
}

// TestGrantsRefusals: everything refused leaves no grant behind and says
// why; bad input is exit 2, a grant that is not there exit 1.
func TestGrantsRefusals(t *testing.T) {
	rds := redistest.Start(t)
	ws, cfg, env, store := grantsAdminSetup(t, rds.URL())
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	memoryEnv := map[string]string{"USER": "tester"}
	noUserEnv := map[string]string{"REDIS_URL": rds.URL()}
	missingWS := grantsConfig(t, filepath.Join(ws, "nope"))
	const memoryMsg = "standing grants need redis.url; the in-memory store lives in one process"
	add := func(args ...string) []string { return append([]string{"grants", "-config", cfg, "add"}, args...) }
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"bash -c prefix", env, add("-tool", "bash", "-prefix", "bash -c", "-cwd", "."), 2, `prefix "bash -c": it runs arbitrary code; grant the exact command instead`},
		{"sudo prefix", env, add("-tool", "bash", "-prefix", "sudo", "-cwd", "."), 2, "runs arbitrary code"},
		{"python -c prefix", env, add("-tool", "bash", "-prefix", "python3 -c", "-cwd", "."), 2, "runs arbitrary code"},
		{"npm test prefix", env, add("-tool", "bash", "-prefix", "npm test", "-cwd", "."), 2, `refused: prefix "npm test": a prefix grant for "npm test" would let any code in the workspace run`},
		{"go test prefix", env, add("-tool", "bash", "-prefix", "go test", "-cwd", "."), 2, "would let any code in the workspace run"},
		{"cargo build prefix", env, add("-tool", "bash", "-prefix", "cargo build", "-cwd", "."), 2, "would let any code in the workspace run"},
		{"make prefix", env, add("-tool", "bash", "-prefix", "make", "-cwd", "."), 2, "would let any code in the workspace run"},
		{"pytest prefix", env, add("-tool", "bash", "-prefix", "pytest", "-cwd", "."), 2, "would let any code in the workspace run"},
		{"compound prefix", env, add("-tool", "bash", "-prefix", "git status && rm", "-cwd", "."), 2, `refused: prefix "git status && rm"`},
		{"path outside the workspace", env, add("-tool", "write_file", "-path", "/etc/passwd"), 2, "outside the workspace"},
		{"path with ..", env, add("-tool", "read_file", "-path", "../secret"), 2, `contains ".."`},
		{"dir outside the workspace", env, add("-tool", "read_file", "-dir", outside), 2, "outside the workspace"},
		{"cwd outside the workspace", env, add("-tool", "bash", "-command", "ls", "-cwd", "/etc"), 2, "outside agent.workspace"},
		{"cwd with ..", env, add("-tool", "bash", "-command", "ls", "-cwd", "app/../.."), 2, `contains ".."`},
		{"cwd through a symlink out", env, add("-tool", "bash", "-command", "ls", "-cwd", "escape"), 2, "leads outside agent.workspace"},
		{"cwd that does not exist", env, add("-tool", "bash", "-command", "ls", "-cwd", "missing"), 2, "no such file"},
		{"unknown tool", env, add("-tool", "curl", "-path", "x"), 2, `unknown tool "curl"`},
		{"no tool", env, add("-path", "x"), 2, "-tool is required"},
		{"bash with a path", env, add("-tool", "bash", "-command", "ls", "-cwd", ".", "-path", "x"), 2, "-path is for file tools"},
		{"bash without cwd", env, add("-tool", "bash", "-command", "ls"), 2, "bash needs -cwd"},
		{"bash with command and prefix", env, add("-tool", "bash", "-command", "ls", "-prefix", "ls", "-cwd", "."), 2, "exactly one of -command"},
		{"file tool with a command", env, add("-tool", "read_file", "-command", "ls", "-path", "x"), 2, "-command is for bash"},
		{"file tool with path and dir", env, add("-tool", "read_file", "-path", "x", "-dir", "docs"), 2, "exactly one of -path"},
		{"workspace root as a file", env, add("-tool", "write_file", "-path", "."), 2, "not a file"},
		{"no grantor", noUserEnv, add("-tool", "read_file", "-dir", "docs"), 2, "$USER is empty"},
		{"missing workspace", env, []string{"grants", "add", "-config", missingWS, "-tool", "read_file", "-dir", "docs"}, 2, "agent.workspace"},
		{"memory store: add", memoryEnv, add("-tool", "read_file", "-dir", "docs"), 2, memoryMsg},
		{"memory store: list", memoryEnv, []string{"grants", "-config", cfg, "list"}, 2, memoryMsg},
		{"memory store: revoke", memoryEnv, []string{"grants", "-config", cfg, "revoke", "AAAAAAAAAAAAAAAAAAAAAA"}, 2, memoryMsg},
		{"unknown id", env, []string{"grants", "-config", cfg, "revoke", "nope"}, 1, `no grant "nope"`},
		{"unknown id of the right shape", env, []string{"grants", "-config", cfg, "revoke", "AAAAAAAAAAAAAAAAAAAAAA"}, 1, `no standing grant "AAAAAAAAAAAAAAAAAAAAAA"`},
		{"unknown id starting with a dash", env, []string{"grants", "-config", cfg, "revoke", "-AAAAAAAAAAAAAAAAAAAAA"}, 1, `no standing grant "-AAAAAAAAAAAAAAAAAAAAA"`},
		{"unknown id starting with a dash, after --", env, []string{"grants", "revoke", "-config", cfg, "--", "-AAAAAAAAAAAAAAAAAAAAA"}, 1, `no standing grant "-AAAAAAAAAAAAAAAAAAAAA"`},
		{"unknown id in a session", env, []string{"grants", "-config", cfg, "revoke", "-session", "s1", "AAAAAAAAAAAAAAAAAAAAAA"}, 1, `in session "s1"`},
		{"revoke without an id", env, []string{"grants", "-config", cfg, "revoke"}, 2, "want exactly one GRANT_ID"},
		{"list with an argument", env, []string{"grants", "-config", cfg, "list", "extra"}, 2, `unexpected argument "extra"`},
		{"no verb", env, []string{"grants", "-config", cfg}, 2, "no verb"},
		{"unknown verb", env, []string{"grants", "-config", cfg, "grant"}, 2, `unknown verb "grant"`},
		{"no config", env, []string{"grants", "list"}, 2, "-config: required"},
		{"help", env, []string{"grants", "-h"}, 0, "usage: bot grants"},
		{"verb help", env, []string{"grants", "add", "-h"}, 0, "usage: bot grants add"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBot(t.Context(), t, tt.env, tt.args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d stderr %q, want %d and %q\nstdout: %s", code, stderr, tt.wantCode, tt.wantStderr, stdout)
			}
		})
	}
	if list, err := store.List(t.Context(), ""); err != nil || len(list) != 0 {
		t.Errorf("refused adds left standing grants: %v %v", list, err)
	}
}

// TestGrantsCommandCoversAsk: a standing grant added by the command makes
// `bot ask` approve the covered command without posting to Slack, and not
// an uncovered one; once revoked by the command, it is asked again.
func TestGrantsCommandCoversAsk(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	// bot ask asks about commands in its own working directory, so the
	// workspace is the test's.
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, env := httpModeConfig(t, fake, fmt.Sprintf("agent:\n  workspace: %q\n", cwd))
	env["REDIS_URL"] = rds.URL()

	code, stdout, stderr := runBot(ctx, t, env, "grants", "-config", cfg, "add", "-tool", "bash", "-command", "make deploy", "-cwd", ".")
	if code != exitOK {
		t.Fatalf("add: exit %d\n%s%s", code, stdout, stderr)
	}
	id := grantLine(t, stdout, "")[0]
	if code, stdout, stderr := runBot(ctx, t, env, "grants", "-config", cfg, "add", "-tool", "bash", "-prefix", "git status", "-cwd", "."); code != exitOK {
		t.Fatalf("add prefix: exit %d\n%s%s", code, stdout, stderr)
	}

	for _, argv := range [][]string{{"make", "deploy"}, {"git", "status", "--short"}} {
		r := waitResult(t, startBot(ctx, t, env, append([]string{"ask", "-config", cfg, "--"}, argv...)...))
		if r.code != 0 || !strings.Contains(r.stdout, "approved by standing grant") || !strings.Contains(r.stdout, "from admin:tester") {
			t.Fatalf("%q: exit %d stdout %q\n%s", argv, r.code, r.stdout, r.stderr)
		}
	}
	if n := countAsks(fake); n != 0 {
		t.Fatalf("%d Asks posted for commands standing grants cover", n)
	}
	r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "300ms", "--", "make", "destroy"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") || countAsks(fake) != 1 {
		t.Fatalf("uncovered command: exit %d stdout %q, %d Asks (want asked, then expired)", r.code, r.stdout, countAsks(fake))
	}

	if code, stdout, stderr := runBot(ctx, t, env, "grants", "-config", cfg, "revoke", id); code != exitOK {
		t.Fatalf("revoke: exit %d\n%s%s", code, stdout, stderr)
	}
	r = waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "300ms", "--", "make", "deploy"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") || countAsks(fake) != 2 {
		t.Fatalf("after revoke: exit %d stdout %q, %d Asks (want asked, then expired)", r.code, r.stdout, countAsks(fake))
	}
}

// Grant ids are lowercase base32 now and never begin with "-". Grants made
// before, with 22-character base64url ids, are still stored, and one in 64
// of those begins with "-": revoke takes it as the id it is, not as an
// unknown flag, wherever it stands among the flags.
func TestGrantsRevokeIDStartingWithDash(t *testing.T) {
	ctx := t.Context()
	rds := redistest.Start(t)
	ws, cfg, env, store := grantsAdminSetup(t, rds.URL())
	scope, err := grants.DirScope("read_file", "docs", ws)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		g, err := store.RecordStanding(ctx, scope, "admin:tester")
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(g.ID, "-") || !grants.PlausibleID(g.ID) {
			t.Fatalf("new grant id %q", g.ID)
		}
	}
	// Two grants as the old ids made them, stored as the store keeps them.
	rdb := redis.NewClient(&redis.Options{Addr: rds.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	var legacy []string
	for _, id := range []string{"-Ab3_Kx9Qw2ZrT5uVy8NpL", "-zz0_mmQQ11aaBBccDDeeF"} {
		g := grants.Grant{ID: id, Scope: scope, By: "admin:old", CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.HSet(ctx, "askops:grants:standing", id, b).Err(); err != nil {
			t.Fatal(err)
		}
		legacy = append(legacy, id)
	}
	for i, args := range [][]string{
		{"grants", "revoke", legacy[0], "-config", cfg},
		{"grants", "-config", cfg, "revoke", "-session", "", legacy[1]},
	} {
		code, stdout, stderr := runBot(ctx, t, env, args...)
		if code != exitOK || !strings.Contains(stdout, "revoked standing grant "+legacy[i]) {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, stdout, stderr)
		}
	}
}
