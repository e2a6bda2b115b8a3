package policy

import (
	"slices"
	"testing"
)

// The program scp, sftp, rsync or git starts to reach a host the command
// names (ssh) or to copy between two local paths (scp's cp) is on Runs:,
// covered by its carrier's allow rule, and denied by a deny rule of its
// own.
func TestTransportsAreShownAndDeniable(t *testing.T) {
	ws := corpusWorkspace(t)
	allow := func(cmds ...string) []Rule {
		var rules []Rule
		for _, c := range cmds {
			rules = append(rules, Rule{Tool: ToolBash, Command: c, Decision: Allow})
		}
		return append(rules, Rule{Tool: ToolWriteFile, Path: "out/**", Decision: Allow})
	}
	for _, tc := range []struct {
		rules   []Rule
		command string
		runs    string
		want    Decision
	}{
		{allow("scp"), "scp host:a out/", "ssh", Allow},
		{allow("sftp"), "sftp host", "ssh", Allow},
		{allow("scp"), "scp README out/r", "cp", Allow},
		{append(allow("scp"), Rule{Tool: ToolBash, Command: "ssh", Decision: Deny}), "scp host:a out/", "ssh", Deny},
		{append(allow("rsync"), Rule{Tool: ToolBash, Command: "ssh", Decision: Deny}), "rsync -a host:a out/", "ssh", Deny},
		{allow("scp"), "scp -S ./tunnel host:a out/", "tunnel", Ask}, // a program it is given is not a transport
		{allow("git push"), "git push git@example.com:r HEAD", "ssh", Allow},
		{allow("git ls-remote"), "git ls-remote ssh://example.com/r", "ssh", Allow},
		{append(allow("git push"), Rule{Tool: ToolBash, Command: "ssh", Decision: Deny}), "git push example.com:r HEAD", "ssh", Deny},
		// A configured remote is the configuration's: git push origin
		// shows git alone, and a deny rule for ssh does not stop it.
		{append(allow("git push"), Rule{Tool: ToolBash, Command: "ssh", Decision: Deny}), "git push origin HEAD", "git", Allow},
	} {
		e, err := New(Config{Rules: tc.rules})
		if err != nil {
			t.Fatal(err)
		}
		if runs := Programs(tc.command); !slices.Contains(runs, tc.runs) {
			t.Errorf("%q: Runs: %q, want %s on it", tc.command, runs, tc.runs)
		}
		if v := e.Evaluate(t.Context(), corpusCall(tc.command, ws, ModeAsk)); v.Decision != tc.want {
			t.Errorf("%q: %s (%s), want %s", tc.command, v.Decision, v.Reason, tc.want)
		}
	}
	if runs := Programs("git push origin HEAD"); slices.ContainsFunc(runs, func(p string) bool { return p == "ssh" || p == "ssh?" }) {
		t.Errorf("git push origin HEAD: Runs: %q shows an ssh the command does not name", runs)
	}
}
