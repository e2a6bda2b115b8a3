package policy

import (
	"context"
	"testing"
)

// rulesUnder: a read of every file under a directory meets the read
// rules that could name one of them, and only those; a glob on the
// files' names leaves out what it cannot match.
func TestRulesUnder(t *testing.T) {
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		{Tool: ToolReadFile, Path: "/etc/shadow", Decision: Deny},
		{Tool: ToolReadFile, Path: "secrets/**", Decision: Deny},
		{Tool: ToolReadFile, Path: "**/*.pem", Decision: Ask},
		{Tool: ToolReadFile, Path: "infra/prod/*.tfvars", Decision: Ask, Approvals: 2},
		{Tool: ToolReadFile, Path: "src/**", Decision: Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const ws = "/home/ana/src/api"
	cases := []struct {
		dir, names string
		mode       Mode
		want       Decision // "" : no rule could name a file under it
		approvals  int
	}{
		{dir: ws, want: Deny},                          // a .env anywhere
		{dir: ws + "/src", want: Deny},                 // src/.env
		{dir: ws, names: ".env", want: Deny},           // glob .env
		{dir: ws, names: "*.go", want: Deny},           // not a .env nor a .pem, but secrets/x.go
		{dir: ws + "/src", names: "*.go", want: ""},    // none of them under src
		{dir: ws + "/src", names: "*.pem", want: Ask},  // a key
		{dir: ws + "/src", names: "*", want: Deny},     // every name
		{dir: ws + "/src", names: "!*.go", want: Deny}, // a negation is not read
		{dir: ws + "/src", names: "*.{go,md}", want: Deny},
		{dir: ws + "/secrets", names: "*.go", want: Deny},
		{dir: ws + "/infra", names: "*.tfvars", want: Ask, approvals: 2},
		{dir: ws + "/infra/dev", names: "*.tfvars", want: ""},
		{dir: "/etc", names: "shadow", want: Deny},
		{dir: "/etc", names: "*.conf", want: ""},
		{dir: "/", names: "shadow", want: Deny},
		{dir: "/", names: "*.conf", want: Deny}, // the workspace is under /, and secrets/** takes any name
		{dir: ws + "/src", names: "*.go", mode: ModeFull, want: ""},
		{dir: ws + "/src", names: "*.pem", mode: ModeFull, want: ""},
		{dir: ws + "/src", mode: ModeFull, want: Deny},
		{dir: ws + "/src", names: "*.pem", mode: ModeNever, want: Deny},
	}
	for _, tc := range cases {
		mode := tc.mode
		if mode == "" {
			mode = ModeAsk
		}
		v, ok := e.rulesUnder(context.Background(), Call{Tool: ToolReadFile, Path: tc.dir, Workspace: ws, Glob: tc.names}, mode)
		got := Decision("")
		if ok {
			got = v.Decision
		}
		if got != tc.want || (tc.approvals > 0 && v.Approvals != tc.approvals) {
			t.Errorf("under %s (names %q, mode %q): %q %d (%s), want %q %d", tc.dir, tc.names, tc.mode, got, v.Approvals, v.Reason, tc.want, tc.approvals)
		}
	}
}

// rulesOn: a file found under a directory meets the deny and ask rules
// naming it, never an allow rule or the tool's class.
func TestRulesOn(t *testing.T) {
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		{Tool: ToolReadFile, Path: "**/*.pem", Decision: Ask},
		{Tool: ToolReadFile, Path: "src/**", Decision: Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const ws = "/w"
	for path, want := range map[string]Decision{"/w/.env": Deny, "/w/src/.env": Deny, "/w/k.pem": Ask, "/w/src/a.go": "", "/elsewhere/.env": Deny, "/elsewhere/a.go": ""} {
		v, ok := e.rulesOn(Call{Tool: ToolReadFile, Path: path, Workspace: ws}, ModeAsk)
		got := Decision("")
		if ok {
			got = v.Decision
		}
		if got != want {
			t.Errorf("%s: %q (%s), want %q", path, got, v.Reason, want)
		}
	}
}
