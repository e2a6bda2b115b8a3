package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnseenNamesWrittenMeetTheRules: a delete of a name the line does not
// spell (a glob, "$f", names read from input) and a copy of such names into
// a directory meet the write_file rules that may name a file there. Before,
// they recorded no write, and mode full allowed them under a deny on
// secrets/**. Pieces (split's, npm pack's, shred -u's) are the files
// directly in their directory: a rule on secrets/** names none of those in
// the workspace's top.
func TestUnseenNamesWrittenMeetTheRules(t *testing.T) {
	ws := corpusWorkspace(t)
	writeFiles(t, ws, map[string]string{"secrets/token": "t\n"})
	e := newTestEngine(t, Config{Mode: ModeFull, Rules: []Rule{{Tool: ToolWriteFile, Path: "secrets/**", Decision: Deny}}})
	for _, tc := range []struct {
		cmd  string
		want Decision
		why  string
	}{
		{"rm secrets/*", Deny, `writes "secrets/*"`},
		{"rm -- secrets/t*", Deny, `writes "secrets/t*"`},
		{"mv secrets/* out/", Deny, `writes "secrets/*"`},
		{"cp x* secrets/", Deny, `writes "secrets/"`},
		{"cp -r src/* secrets/", Deny, `writes "secrets/"`},
		{"cp -t secrets x*", Deny, `writes "secrets"`},
		{`rm "$X"`, Ask, `files under "/"`},
		{`for f in secrets/*; do rm "$f"; done`, Ask, `files under "/"`},
		{`shred -u "$X"`, Ask, `files under "/"`},
		{"ls | xargs unlink", Ask, `files under "/"`},
		{`find out -exec sh -c 'rm "$1"' _ {} \;`, Ask, `files under "/"`}, // find's file, through a script: not seen as one
		{"shred -u secrets/token", Deny, `writes "secrets/token"`},
		{"npm pack --pack-destination secrets", Deny, `writes "secrets/*.tgz"`},
		{"split -l1 README secrets/p", Deny, `writes "secrets/p*"`},
		// Nothing a rule names.
		{"rm out/*", Allow, "mode full"},
		{"cp x* out/", Allow, "mode full"},
		{"find out -name '*.o' -exec rm -f {} +", Allow, "mode full"}, // find's own tree, out
		{"npm pack", Allow, "mode full"},
		{"split -l1 README p", Allow, "mode full"},
		{"shred -u out/x", Allow, "mode full"},
	} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: tc.cmd, Cwd: ws, Workspace: ws, Mode: ModeFull})
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.why) {
			t.Errorf("%s: %s (%s), want %s with %q", tc.cmd, v.Decision, v.Reason, tc.want, tc.why)
		}
	}
}

// TestPatternDeletesReachTheirMatches: a pattern deleted without -r
// (rm out/*.o) removes what the pattern matches, never a directory's
// files, so a rule on a file deeper down (out/sub/.env) does not meet it;
// with -r, the matches' trees do. Where the call was resolved the matches
// are listed; elsewhere the pattern's last segment is judged against the
// rules. Before, such a delete was its directory's whole tree: rm out/*.o
// was denied where out/sub/.env was.
func TestPatternDeletesReachTheirMatches(t *testing.T) {
	ws := corpusWorkspace(t)
	writeFiles(t, ws, map[string]string{"out/a.o": "o\n", "out/sub/.env": "S=1\n", "out/x/a.o": "o\n"})
	e := newTestEngine(t, Config{Mode: ModeFull, Rules: []Rule{{Tool: ToolWriteFile, Path: "**/.env", Decision: Deny}}})
	for _, tc := range []struct {
		cmd      string
		resolved bool
		want     Decision
		why      string
	}{
		{"rm out/*.o", true, Allow, ""},
		{"rm out/*", true, Allow, ""}, // out/sub is matched, and rm without -r leaves it
		{"rm -f out/*/a.o", true, Allow, ""},
		{"unlink out/*.o", true, Allow, ""},
		{"rm -r out/*", true, Deny, "out/sub/.env"},
		{"rm -rf out/s*", true, Deny, "out/sub/.env"},
		{"rm out/*/.e*", true, Deny, "out/sub/.env"},
		{"rm out/*.o", false, Allow, ""},
		{"rm out/*", false, Ask, "may include"}, // * may match a .env there
		{"rm -r out/*.o", false, Ask, "may include"},
	} {
		c := Call{Tool: ToolBash, Safety: SideEffect, Command: tc.cmd, Cwd: ws, Workspace: ws, Mode: ModeFull, Resolved: tc.resolved}
		v := e.Evaluate(t.Context(), c)
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.why) {
			t.Errorf("%q (resolved %v): %s (%s), want %s (%s)", tc.cmd, tc.resolved, v.Decision, v.Reason, tc.want, tc.why)
		}
	}
}

// writeFiles writes each file (relative to ws) with its directories.
func writeFiles(t *testing.T, ws string, files map[string]string) {
	t.Helper()
	for f, c := range files {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShredWritesThroughLinks: shred overwrites what a link names, so a
// pattern it is given meets the rules where each link leads: where the
// call was resolved, shred out/* was allowed in mode full under a deny on
// **/.env while out/l led to .env, which it then overwrote. rm removes
// the link itself.
func TestShredWritesThroughLinks(t *testing.T) {
	ws := corpusWorkspace(t)
	writeFiles(t, ws, map[string]string{".env": "S=1\n", "out/a.o": "o\n"})
	if err := os.Symlink("../.env", filepath.Join(ws, "out/l")); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, Config{Mode: ModeFull, Rules: []Rule{{Tool: ToolWriteFile, Path: "**/.env", Decision: Deny}}})
	for cmd, want := range map[string]Decision{"shred out/*": Deny, "shred -u out/*": Deny, "shred out/*.o": Allow, "rm out/*": Allow} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: cmd, Cwd: ws, Workspace: ws, Mode: ModeFull, Resolved: true})
		if v.Decision != want {
			t.Errorf("%q: %s (%s), want %s", cmd, v.Decision, v.Reason, want)
		}
	}
}
