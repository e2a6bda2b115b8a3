package config

import (
	"strings"
	"testing"

	"github.com/askops/askops/gateway"
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
	c, ps := Check([]byte(good), envOf(map[string]string{"ASKOPS_TOKEN_ANA": "ana-token-from-env"}), Serve)
	if len(ps) > 0 {
		t.Fatalf("valid api block refused: %v", ps)
	}
	if c.API.Tokens[0].Value().Reveal() != "ana-token-from-env" || c.API.Tokens[1].Value().Reveal() != secret {
		t.Errorf("token values not resolved")
	}
	cfgs := make([]gateway.TokenConfig, len(c.API.Tokens))
	for i, tk := range c.API.Tokens {
		cfgs[i] = gateway.TokenConfig{Name: tk.Name, Value: tk.Value().Reveal(), Scopes: tk.Scopes, Workspace: tk.Workspace}
	}
	if _, err := gateway.NewTokens(cfgs); err != nil {
		t.Errorf("gateway refuses the validated tokens: %v", err)
	}
	if ScopeAsk != string(gateway.ScopeAsk) || ScopeDecide != string(gateway.ScopeDecide) {
		t.Errorf("config's scopes %q, %q are not the gateway's %q, %q", ScopeAsk, ScopeDecide, gateway.ScopeAsk, gateway.ScopeDecide)
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
		{"slack_user not an id", validYAML + "api:\n  tokens:\n    - {name: a, token: x, scopes: [decide], slack_user: ana}\n", `api.tokens[0].slack_user: want a Slack user id such as U0123ABCD, got "ana"`},
		{"console slack_user not an id", validYAML + "console:\n  enabled: true\n  listen: 127.0.0.1:8081\n  slack_user: \"@dana\"\n", `console.slack_user: want a Slack user id such as U0123ABCD, got "@dana"`},
		{"relative workspace", validYAML + "api:\n  tokens:\n    - {name: a, token: x, scopes: [ask], workspace: src}\n", "api.tokens[0].workspace: want an absolute, clean path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := Check([]byte(tc.yaml), noEnv, CheckConfig)
			if !strings.Contains(ps.Error(), tc.want) {
				t.Errorf("problems:\n%v\nwant one containing %q", ps, tc.want)
			}
			if strings.Contains(ps.Error(), secret) {
				t.Errorf("a problem prints the token: %v", ps)
			}
		})
	}
}

// People names the person behind each identity the config links to a
// Slack user (api.tokens[].slack_user, console.slack_user), the console's
// as its decider ("console:" + user); a token without slack_user is left
// out, to be counted as nobody known.
func TestPeople(t *testing.T) {
	y := validYAML + `api:
  tokens:
    - {name: ci, token: x, scopes: [decide]}
    - {name: dana-laptop, token: y, scopes: [decide], slack_user: U0DANA}
console:
  enabled: true
  listen: 127.0.0.1:8081
  user: dana
  slack_user: U0DANA
`
	c, ps := Check([]byte(y), noEnv, CheckConfig)
	if len(ps) > 0 {
		t.Fatalf("refused: %v", ps)
	}
	got := c.People(noEnv)
	want := map[string]string{"dana-laptop": "U0DANA", "console:dana": "U0DANA"}
	if len(got) != len(want) || got["dana-laptop"] != want["dana-laptop"] || got["console:dana"] != want["console:dana"] {
		t.Errorf("People = %v, want %v", got, want)
	}
}
