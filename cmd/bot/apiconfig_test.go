package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The api: block: tokens from the file or the environment, every mistake
// named by its key, and no token value ever printed.
func TestAPIConfig(t *testing.T) {
	const secret = "s3cret-console-token-value"
	good := validYAML + `api:
  tokens:
    - {name: laptop-ana, token_env: ASKOPS_TOKEN_ANA, scopes: [ask]}
    - {name: console, token: "` + secret + `", scopes: [ask, decide]}
`
	c, ps := checkConfig([]byte(good), envOf(map[string]string{"ASKOPS_TOKEN_ANA": "ana-token-from-env"}), cmdServe)
	if len(ps) > 0 {
		t.Fatalf("valid api block refused: %v", ps)
	}
	if c.API.Tokens[0].value().Reveal() != "ana-token-from-env" || c.API.Tokens[1].value().Reveal() != secret {
		t.Errorf("token values not resolved")
	}
	if _, err := c.API.tokens(); err != nil {
		t.Errorf("gateway refuses the validated tokens: %v", err)
	}

	for _, tc := range []struct{ name, yaml, want string }{
		{"env not set", good, "api.tokens[0].token_env: ASKOPS_TOKEN_ANA is not set"},
		{"no name", validYAML + "api:\n  tokens:\n    - {token: abcdefgh, scopes: [ask]}\n", "api.tokens[0].name: required"},
		{"no value", validYAML + "api:\n  tokens:\n    - {name: a, scopes: [ask]}\n", "api.tokens[0].token_env: required (or token)"},
		{"both", validYAML + "api:\n  tokens:\n    - {name: a, token: x, token_env: Y, scopes: [ask]}\n", "api.tokens[0]: set token or token_env, not both"},
		{"no scopes", validYAML + "api:\n  tokens:\n    - {name: a, token: x}\n", "api.tokens[0].scopes: required"},
		{"bad scope", validYAML + "api:\n  tokens:\n    - {name: a, token: x, scopes: [admin]}\n", `api.tokens[0].scopes[0]: unknown scope "admin"`},
		{"same name", validYAML + "api:\n  tokens:\n    - {name: a, token: x, scopes: [ask]}\n    - {name: a, token: y, scopes: [ask]}\n", `api.tokens[1].name: "a" is also api.tokens[0]'s name`},
		{"same value", validYAML + "api:\n  tokens:\n    - {name: a, token: " + secret + ", scopes: [ask]}\n    - {name: b, token: " + secret + ", scopes: [ask]}\n", "api.tokens[1]: the same token as api.tokens[0]"},
		{"unknown key", validYAML + "api:\n  tokens:\n    - {name: a, token: x, scopes: [ask], admin: true}\n", "api.tokens[0].admin: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := checkConfig([]byte(tc.yaml), noEnv, cmdCheckConfig)
			if !strings.Contains(ps.Error(), tc.want) {
				t.Errorf("problems:\n%v\nwant one containing %q", ps, tc.want)
			}
			if strings.Contains(ps.Error(), secret) {
				t.Errorf("a problem prints the token: %v", ps)
			}
		})
	}
}

// bot hook fails closed: no askops to ask is a deny on stdout and exit 0;
// input it cannot read is exit 2 with the reason on stderr.
func TestHookCommandFailsClosed(t *testing.T) {
	event := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"hook", "claude"}, noEnv, strings.NewReader(event), &out, &errOut)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"askops: approval unavailable: no askops to ask: set -url or ASKOPS_URL (or -config). The action was not performed; do not retry it unchanged."}}` + "\n"
	if code != 0 || out.String() != want {
		t.Errorf("exit %d\nstdout %s\nwant   %s\nstderr %s", code, out.String(), want, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"hook", "codex", "-url", "http://127.0.0.1:1"}, envOf(map[string]string{"ASKOPS_TOKEN": "x"}), strings.NewReader("not json"), &out, &errOut)
	if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "unreadable hook input") {
		t.Errorf("unreadable: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
