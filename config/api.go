package config

import (
	"fmt"
	"path"
	"strings"
)

// APIConfig is the gateway's HTTP API (api: in the file): who may call it.
type APIConfig struct {
	Tokens []APIToken `yaml:"tokens"`
}

// APIToken is one bearer token: its value in the file (token) or, better,
// in an environment variable (token_env), and what it may do.
type APIToken struct {
	Name     string   `yaml:"name"`
	Token    Secret   `yaml:"token"`
	TokenEnv string   `yaml:"token_env"`
	Scopes   []string `yaml:"scopes"`
	// SlackUser is the Slack user id of the person who holds the token,
	// if they have one: a quorum then counts the token's approval as
	// theirs (once with their Slack click). Without it the holder may be
	// anyone, and counts toward a quorum beside nobody named (see People).
	SlackUser string `yaml:"slack_user"`
	// Workspace, when set, is the root every session of this token works
	// in (absolute); without it a session's root is pinned to the first
	// cwd it is seen with.
	Workspace string `yaml:"workspace"`

	// fromEnv is token_env's value, read when the file is loaded.
	fromEnv Secret
}

// resolveEnv reads every token_env.
func (c *APIConfig) resolveEnv(getenv func(string) string) {
	for i := range c.Tokens {
		if e := c.Tokens[i].TokenEnv; e != "" {
			c.Tokens[i].fromEnv = Secret(getenv(e))
		}
	}
}

// Value is the token's secret, wherever it came from.
func (t APIToken) Value() Secret {
	if t.TokenEnv != "" {
		return t.fromEnv
	}
	return t.Token
}

// problems checks every api.tokens entry (never printing a value). Only
// serve (and check-config) need the tokens' values: other commands do not
// serve the API, so an unset token_env does not stop them.
func (c APIConfig) problems(cmd Command) Problems {
	serves := cmd == Serve || cmd == CheckConfig
	var ps Problems
	names := map[string]int{}
	values := map[Secret]int{}
	for i, t := range c.Tokens {
		key := fmt.Sprintf("api.tokens[%d]", i)
		switch {
		case t.Name == "":
			ps.add(key+".name", "required: who holds the token (shown as the decider and in logs)")
		case strings.ContainsAny(t.Name, " \t\n"):
			ps.add(key+".name", "want a name without spaces, got %q", t.Name)
		default:
			if j, dup := names[t.Name]; dup {
				ps.add(key+".name", "%q is also api.tokens[%d]'s name", t.Name, j)
			}
			names[t.Name] = i
		}
		switch {
		case t.Token != "" && t.TokenEnv != "":
			ps.add(key, "set token or token_env, not both")
		case t.Token == "" && t.TokenEnv == "":
			ps.add(key+".token_env", "required (or token): the variable holding the token")
		case t.TokenEnv != "" && t.fromEnv == "" && serves:
			ps.add(key+".token_env", "%s is not set", t.TokenEnv)
		}
		if v := t.Value(); v != "" {
			if j, dup := values[v]; dup {
				ps.add(key, "the same token as api.tokens[%d]: give each holder its own", j)
			}
			values[v] = i
		}
		if len(t.Scopes) == 0 {
			ps.add(key+".scopes", "required: ask, decide or both")
		}
		if t.SlackUser != "" && !slackUserIDRe.MatchString(t.SlackUser) {
			ps.add(key+".slack_user", "want a Slack user id such as U0123ABCD, got %q", t.SlackUser)
		}
		if w := t.Workspace; w != "" && (!strings.HasPrefix(w, "/") || path.Clean(w) != w) {
			ps.add(key+".workspace", "want an absolute, clean path, got %q", w)
		}
		for j, s := range t.Scopes {
			if s != ScopeAsk && s != ScopeDecide {
				ps.add(fmt.Sprintf("%s.scopes[%d]", key, j), "unknown scope %q (want ask or decide)", s)
			}
		}
	}
	return ps
}

// The API's scopes, as api.tokens[].scopes names them: gateway.ScopeAsk
// and gateway.ScopeDecide (api_test.go pins that they agree). They are
// spelled here so the config links no front door.
const (
	ScopeAsk    = "ask"
	ScopeDecide = "decide"
)
