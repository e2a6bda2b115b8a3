// Package local is the local Ask API: `bot serve` without Slack mounts it
// beside its console and announces its URL and tokens in the endpoint file
// (hook.WriteLocalEndpoint), so `bot ask`, `bot hook` and `bot mcp` with no
// config or URL find it, and `bot run` without Slack asks it
// (RunApprover). The tokens are kept in a second 0600 file beside the
// endpoint file and reused by the next serve, so a token copied into a
// script survives a restart.
package local

import (
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
)

// Tokens are the local Ask API's two tokens (see hook.LocalEndpoint).
type Tokens struct {
	Script string `json:"token"`
	Agent  string `json:"agent_token"`
}

// localTokensPath is the tokens file: local-tokens.json beside the
// endpoint file.
func localTokensPath(getenv func(string) string) (string, error) {
	p, err := hook.LocalEndpointPath(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "local-tokens.json"), nil
}

// LoadTokens returns the tokens the last local serve used, or new ones
// (written to the 0600 tokens file) when there are none, they are not
// readable, or rotate asks for new ones.
func LoadTokens(getenv func(string) string, rotate bool) (Tokens, error) {
	p, err := localTokensPath(getenv)
	if err != nil {
		return Tokens{}, err
	}
	if !rotate {
		var t Tokens
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 == 0 {
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &t) == nil && plausibleToken(t.Script) && plausibleToken(t.Agent) && t.Script != t.Agent {
				return t, nil
			}
		}
	}
	t := Tokens{Script: recordid.Secret(), Agent: recordid.Secret()}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return Tokens{}, err
	}
	b, _ := json.Marshal(t)
	if err := hook.WritePrivate(p, b); err != nil {
		return Tokens{}, err
	}
	return t, nil
}

// plausibleToken is a token recordid.Secret could have made, or the 64 hex
// digits an earlier release wrote to the tokens file (still in use until
// the next rotation; Remove in v0.2.0).
func plausibleToken(s string) bool {
	if recordid.ValidSecret(s) {
		return true
	}
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Config wires the local Ask API.
type Config struct {
	Asks     gateway.Asks
	Approver gateway.Approver
	// Rules and Grants are the policy's: only a grant (or a deny rule)
	// answers a script without a human (policy.ModeScript).
	Rules  []policy.Rule
	Grants policy.GrantChecker
	// Mode is policy.mode: the mode agents' hooks are judged in, as the
	// serve with Slack judges them ("" is ask). bot ask's is always
	// policy.ModeScript.
	Mode       policy.Mode
	MaxTimeout time.Duration
	// Tokens are the two tokens it takes (LoadTokens).
	Tokens Tokens
	// Held is gateway.Config.Held for both Services.
	Held   *heldhttp.Held
	Logger *slog.Logger
	// BoundBash is gateway.Config.BoundBash of the agents' Service.
	BoundBash gateway.BoundBash
}

// API is the local Ask API: its Handler (every route under /v1/) and
// the two Services behind it, one per token: `bot ask`'s (policy.ModeScript)
// and the agents' hooks' and bot mcp's (the gateway's own judging). The
// caller mounts Handler at /v1/, and stops and closes it.
type API struct {
	Handler http.Handler
	script  *gateway.Service
	agents  *gateway.Service
}

// New builds the local Ask API on cfg.Tokens.
func New(cfg Config) (*API, error) {
	if !plausibleToken(cfg.Tokens.Script) || !plausibleToken(cfg.Tokens.Agent) || cfg.Tokens.Script == cfg.Tokens.Agent {
		return nil, errors.New("gateway: the local API needs two different tokens (LoadTokens)")
	}
	// One engine per token: a script asked because it wants a human
	// (policy.ModeScript), an agent's hook is judged as the agent's call.
	engine := func(mode policy.Mode) (*policy.Engine, error) {
		return policy.New(policy.Config{Rules: cfg.Rules, Mode: mode, Grants: cfg.Grants, Logger: cfg.Logger.With("component", "policy")})
	}
	scripts, err1 := engine(policy.ModeScript)
	agentsPolicy, err2 := engine(cfg.Mode) // "" is ask, as policy.New reads it
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	service := func(p gateway.Policy, bb gateway.BoundBash) (*gateway.Service, error) {
		return gateway.New(gateway.Config{Asks: cfg.Asks, Approver: cfg.Approver, Policy: p, MaxTimeout: cfg.MaxTimeout, Held: cfg.Held, Logger: cfg.Logger.With("component", "gateway"), BoundBash: bb})
	}
	script, err := service(scripts, nil)
	if err != nil {
		return nil, err
	}
	agents, err := service(agentsPolicy, cfg.BoundBash)
	if err != nil {
		script.Close()
		return nil, err
	}
	api := func(svc *gateway.Service, name, token string) (http.Handler, error) {
		// Only this user on this machine reads the tokens file: the
		// serve sees the files its callers name, and resolves their
		// paths itself.
		tokens, err := gateway.NewTokens([]gateway.TokenConfig{{Name: name, Value: token, Scopes: []string{string(gateway.ScopeAsk)}, Local: true}})
		if err != nil {
			return nil, err
		}
		return gateway.NewAPI(svc, tokens, cfg.Logger.With("component", "api")).Handler(), nil
	}
	scriptAPI, err1 := api(script, "local", cfg.Tokens.Script)
	agentAPI, err2 := api(agents, "local-agent", cfg.Tokens.Agent)
	if err := errors.Join(err1, err2); err != nil {
		script.Close()
		agents.Close()
		return nil, err
	}
	agentBearer := "Bearer " + cfg.Tokens.Agent
	// The token says which judging a call gets; each API checks its own
	// token again, so a wrong one is refused as before.
	byToken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(agentBearer)) == 1 {
			agentAPI.ServeHTTP(w, r)
			return
		}
		scriptAPI.ServeHTTP(w, r)
	})
	return &API{Handler: byToken, script: script, agents: agents}, nil
}

// Stop ends every wait at once (they answer cancelled); Close also waits
// for the round trips still running.
func (l *API) Stop() { l.script.Stop(); l.agents.Stop() }

// Close implements io.Closer.
func (l *API) Close() { l.script.Close(); l.agents.Close() }
